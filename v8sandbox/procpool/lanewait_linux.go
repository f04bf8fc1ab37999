package procpool

import (
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// watchLane makes fd (a lane's reply pipe) non-blocking and returns an
// epoll instance that reports it readable, so that a waiting thread can
// poll the pipe for a while and then sleep. It runs before the seccomp
// filter is installed (fcntl, epoll_create1 and epoll_ctl are not on the
// allowlist; the waits use only read, sched_yield and epoll_pwait, which
// are). On failure fd is left blocking and ok is false.
func watchLane(fd int) (ep int, ok bool) {
	ep, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		return -1, false
	}
	ev := unix.EpollEvent{Events: unix.EPOLLIN, Fd: int32(fd)}
	if unix.EpollCtl(ep, unix.EPOLL_CTL_ADD, fd, &ev) != nil || unix.SetNonblock(fd, true) != nil {
		unix.Close(ep)
		return -1, false
	}
	return ep, true
}

// sleepUntilReadable blocks the calling thread in epoll_pwait until the
// watched pipe is readable (or closed).
func sleepUntilReadable(ep int) error {
	var ev unix.EpollEvent
	for {
		_, _, errno := syscall.Syscall6(unix.SYS_EPOLL_PWAIT, uintptr(ep), uintptr(unsafe.Pointer(&ev)), 1, ^uintptr(0), 0, 0)
		switch errno {
		case 0:
			return nil
		case syscall.EINTR:
			continue
		default:
			return errno
		}
	}
}

// yieldCPU lets another runnable thread use this CPU (sched_yield) while
// a lane is polled.
func yieldCPU() { _, _, _ = syscall.RawSyscall(unix.SYS_SCHED_YIELD, 0, 0, 0) }

// readNow reads from fd, a non-blocking descriptor, without telling Go's
// scheduler about a system call that cannot block: polling a lane makes
// many, and each would otherwise enter and leave the scheduler's syscall
// state (and let sysmon hand the P to another thread).
func readNow(fd int, p []byte) (int, error) {
	var ptr unsafe.Pointer
	if len(p) > 0 {
		ptr = unsafe.Pointer(&p[0])
	}
	n, _, errno := syscall.RawSyscall(syscall.SYS_READ, uintptr(fd), uintptr(ptr), uintptr(len(p)))
	if errno != 0 {
		return 0, errno
	}
	return int(n), nil
}
