//go:build escapedrill && linux

package procpool

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The escape drill: compiled only with the build tag escapedrill (never in
// a release binary; TestEscapeDrill builds one), it lets a test make a
// confined worker execute an attacker's actions natively, with the
// worker's real credentials, as an exploit of V8 would.

func init() { drillHook = runEscapeDrill }

func runEscapeDrill(spec string) json.RawMessage {
	var s drillSpec
	if err := json.Unmarshal([]byte(spec), &s); err != nil {
		b, _ := json.Marshal(map[string]string{"error": err.Error()})
		return b
	}
	var out []drillOutcome
	for _, a := range drillActions(s) {
		if len(s.Only) > 0 && !slices.Contains(s.Only, a.name) || slices.Contains(s.Skip, a.name) {
			continue
		}
		err := a.do()
		o := drillOutcome{Action: a.name, Denied: err != nil}
		var errno syscall.Errno
		if errors.As(err, &errno) {
			o.Errno = unix.ErrnoName(errno)
		} else if err != nil {
			o.Errno = err.Error()
		}
		out = append(out, o)
	}
	b, _ := json.Marshal(out)
	return b
}

type drillAction struct {
	name string
	do   func() error
}

func readFile(path string) error {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	var buf [64]byte
	_, err = unix.Read(fd, buf[:])
	return err
}

func drillActions(s drillSpec) []drillAction {
	return []drillAction{
		{"read the gateway's config file", func() error { return readFile(s.ConfigFile) }},
		{"read /etc/passwd", func() error { return readFile("/etc/passwd") }},
		{"read /proc/<gateway>/environ", func() error { return readFile(fmt.Sprintf("/proc/%d/environ", s.GatewayPID)) }},
		{"read /proc/<backend>/environ", func() error { return readFile(fmt.Sprintf("/proc/%d/environ", s.BackendPID)) }},
		{"create a file", func() error {
			fd, err := unix.Open(s.CreateFile, unix.O_CREAT|unix.O_WRONLY|unix.O_CLOEXEC, 0o600)
			if err == nil {
				unix.Close(fd)
			}
			return err
		}},
		{"connect to a loopback TCP listener", func() error {
			fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
			if err != nil {
				return err
			}
			defer unix.Close(fd)
			return unix.Connect(fd, &unix.SockaddrInet4{Port: s.Port, Addr: [4]byte{127, 0, 0, 1}})
		}},
		{"execve /bin/sh", func() error {
			return unix.Exec("/bin/sh", []string{"sh", "-c", "exit 0"}, nil)
		}},
		{"fork", func() error {
			pid, _, errno := unix.RawSyscall6(unix.SYS_CLONE, uintptr(unix.SIGCHLD), 0, 0, 0, 0, 0)
			if errno != 0 {
				return errno
			}
			if pid == 0 {
				unix.RawSyscall(unix.SYS_EXIT_GROUP, 0, 0, 0)
			}
			return nil
		}},
		{"ptrace the gateway", func() error { return unix.PtraceSeize(s.GatewayPID) }},
		{"ptrace a sibling worker", func() error { return unix.PtraceSeize(s.SiblingPID) }},
		{"signal the gateway", func() error { return unix.Kill(s.GatewayPID, unix.SIGCONT) }},
		{"signal a sibling worker", func() error { return unix.Kill(s.SiblingPID, unix.SIGCONT) }},
		{"process_vm_readv the gateway", func() error {
			var buf [8]byte
			local := []unix.Iovec{{Base: &buf[0], Len: 8}}
			remote := []unix.RemoteIovec{{Base: uintptr(0x400000), Len: 8}}
			_, err := unix.ProcessVMReadv(s.GatewayPID, local, remote, 0)
			return err
		}},
		{"mount", func() error { return unix.Mount("none", s.MountDir, "tmpfs", 0, "") }},
		{"unshare a network namespace", func() error { return unix.Unshare(unix.CLONE_NEWNET) }},
		{"bpf", func() error {
			attr := [48]byte{0: 2 /* BPF_MAP_TYPE_ARRAY */, 4: 4, 8: 4, 12: 1}
			fd, _, errno := unix.Syscall(unix.SYS_BPF, 0 /* BPF_MAP_CREATE */, uintptr(unsafe.Pointer(&attr[0])), unsafe.Sizeof(attr))
			if errno != 0 {
				return errno
			}
			unix.Close(int(fd))
			return nil
		}},
		{"io_uring_setup", func() error {
			var params [120]byte
			fd, _, errno := unix.Syscall(unix.SYS_IO_URING_SETUP, 1, uintptr(unsafe.Pointer(&params[0])), 0)
			if errno != 0 {
				return errno
			}
			unix.Close(int(fd))
			return nil
		}},
		{"userfaultfd", func() error {
			fd, _, errno := unix.Syscall(unix.SYS_USERFAULTFD, unix.O_CLOEXEC, 0, 0)
			if errno != 0 {
				return errno
			}
			unix.Close(int(fd))
			return nil
		}},
		{"perf_event_open", func() error {
			attr := unix.PerfEventAttr{Type: unix.PERF_TYPE_SOFTWARE, Config: unix.PERF_COUNT_SW_CPU_CLOCK}
			attr.Size = uint32(unsafe.Sizeof(attr))
			fd, err := unix.PerfEventOpen(&attr, 0, -1, -1, unix.PERF_FLAG_FD_CLOEXEC)
			if err == nil {
				unix.Close(fd)
			}
			return err
		}},
		{"setuid 0", func() error {
			// Raw: glibc's setxid broadcast aborts the process when threads
			// disagree.
			_, _, errno := unix.RawSyscall(unix.SYS_SETRESUID, 0, 0, 0)
			if errno != 0 {
				return errno
			}
			return nil
		}},
	}
}
