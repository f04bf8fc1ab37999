//go:build escapedrill && linux

package procpool

/*
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>

static pthread_mutex_t drill_gate = PTHREAD_MUTEX_INITIALIZER;

static void *drill_park(void *arg) {
	(void)arg;
	pthread_mutex_lock(&drill_gate);
	pthread_mutex_unlock(&drill_gate);
	return NULL;
}

// drill_threads creates up to n threads that wait on a gate, then opens the
// gate and joins them; it returns pthread_create's error (0: all created)
// and how many it created.
static int drill_threads(int n, int *created) {
	pthread_t *ts = calloc(n, sizeof *ts);
	if (ts == NULL) {
		return ENOMEM;
	}
	pthread_attr_t attr;
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 64 * 1024);
	pthread_mutex_lock(&drill_gate);
	int err = 0, i;
	for (i = 0; i < n; i++) {
		err = pthread_create(&ts[i], &attr, drill_park, NULL);
		if (err != 0) {
			break;
		}
	}
	pthread_mutex_unlock(&drill_gate);
	for (int j = 0; j < i; j++) {
		pthread_join(ts[j], NULL);
	}
	pthread_attr_destroy(&attr);
	free(ts);
	*created = i;
	return err;
}
*/
import "C"

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

// existenceOracle opens an existing and a missing file with flags and
// returns nil when the answers differ (the worker learns whether a path
// exists), else the answer both got.
func existenceOracle(existing string, flags int) error {
	open := func(path string) error {
		fd, err := unix.Open(path, flags|unix.O_CLOEXEC, 0)
		if err == nil {
			unix.Close(fd)
		}
		return err
	}
	a, b := open(existing), open(existing+".missing")
	if a == nil || b == nil || a.Error() != b.Error() {
		return nil
	}
	return a
}

// sigqueue sends SIGCONT with a caller-built siginfo (si_code SI_QUEUE) to
// tgid (rt_sigqueueinfo) or to its thread tid (rt_tgsigqueueinfo).
func sigqueue(tgid, tid int) error {
	var info [128]byte
	*(*int32)(unsafe.Pointer(&info[0])) = int32(unix.SIGCONT)
	*(*int32)(unsafe.Pointer(&info[8])) = -1 // SI_QUEUE
	var errno syscall.Errno
	if tid == 0 {
		_, _, errno = unix.RawSyscall(unix.SYS_RT_SIGQUEUEINFO, uintptr(tgid), uintptr(unix.SIGCONT), uintptr(unsafe.Pointer(&info[0])))
	} else {
		_, _, errno = unix.RawSyscall6(unix.SYS_RT_TGSIGQUEUEINFO, uintptr(tgid), uintptr(tid), uintptr(unix.SIGCONT), uintptr(unsafe.Pointer(&info[0])), 0, 0)
	}
	if errno != 0 {
		return errno
	}
	return nil
}

// drillThreadBomb is how many threads the drill tries to create: more than
// the bound (confine_linux.h), far fewer than a host's pid_max.
const drillThreadBomb = 3000

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
		// The main thread's tid is the pid.
		{"tgkill the gateway", func() error { return unix.Tgkill(s.GatewayPID, s.GatewayPID, unix.SIGCONT) }},
		{"tgkill a sibling worker", func() error { return unix.Tgkill(s.SiblingPID, s.SiblingPID, unix.SIGCONT) }},
		{"tkill the gateway", func() error {
			_, _, errno := unix.RawSyscall(unix.SYS_TKILL, uintptr(s.GatewayPID), uintptr(unix.SIGCONT), 0)
			if errno != 0 {
				return errno
			}
			return nil
		}},
		{"rt_tgsigqueueinfo the gateway", func() error { return sigqueue(s.GatewayPID, s.GatewayPID) }},
		{"rt_sigqueueinfo the gateway", func() error { return sigqueue(s.GatewayPID, 0) }},
		{"create 3000 threads", func() error {
			var created C.int
			if err := C.drill_threads(drillThreadBomb, &created); err != 0 {
				return fmt.Errorf("%s after %d threads", unix.ErrnoName(syscall.Errno(err)), int(created))
			}
			return nil
		}},
		{"openat tells whether a file exists", func() error { return existenceOracle(s.ConfigFile, unix.O_RDONLY) }},
		{"openat O_PATH tells whether a file exists", func() error { return existenceOracle(s.ConfigFile, unix.O_PATH) }},
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
