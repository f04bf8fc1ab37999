package procpool

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// defaultCommand runs the very binary of this process: /proc/self/exe stays
// valid (and the same file) even if the binary on disk is replaced during an
// upgrade, so parent and workers never disagree on the protocol.
func defaultCommand() ([]string, error) {
	return []string{"/proc/self/exe", WorkerCommand}, nil
}

// sysProcAttr puts the worker in a session of its own (a terminal's ^C
// reaches only the parent, and the worker cannot send SIGCONT to the
// gateway's session, which the kernel allows any process of a session), has the kernel SIGKILL it when the thread that
// started it dies (workers are started from a goroutine locked to a thread
// that lives as long as the pool), and creates the namespaces of ns.
func sysProcAttr(ns nsLevel) *syscall.SysProcAttr {
	attr := &syscall.SysProcAttr{Setsid: true, Pdeathsig: syscall.SIGKILL, Cloneflags: ns.flags}
	if ns.flags&syscall.CLONE_NEWUSER != 0 {
		// One id mapped: the worker is uid/gid 65534 inside its namespace,
		// which is ns.hostID outside. CAP_SETPCAP rides along as an ambient
		// capability so that the worker can empty its bounding set before
		// anything runs (confine_linux.c); it then drops every capability.
		attr.UidMappings = []syscall.SysProcIDMap{{ContainerID: workerID, HostID: ns.hostUID, Size: 1}}
		attr.GidMappings = []syscall.SysProcIDMap{{ContainerID: workerID, HostID: ns.hostGID, Size: 1}}
		attr.AmbientCaps = []uintptr{unix.CAP_SETPCAP}
		if ns.privileged {
			// A root gateway may map any id and clear the supplementary
			// groups (an unprivileged one must deny setgroups to map).
			attr.GidMappingsEnableSetgroups = true
			attr.Credential = &syscall.Credential{Uid: workerID, Gid: workerID, Groups: []uint32{}}
		}
	}
	return attr
}

// nsLevels lists the ways to spawn a worker, most confined first; a pool
// falls back to the next when the kernel or a container refuses one
// (AppArmor's or a seccomp profile's ban on user namespaces, a binary that
// the unprivileged id cannot execute, a kernel without some namespace).
// mode off gets no namespaces at all.
func nsLevels(mode ConfinementMode) []nsLevel {
	none := nsLevel{why: "not requested"}
	if mode == ConfinementOff {
		return []nsLevel{none}
	}
	none.why = "refused by the host"
	const others = syscall.CLONE_NEWNET | syscall.CLONE_NEWNS | syscall.CLONE_NEWPID | syscall.CLONE_NEWIPC
	uid, gid := os.Geteuid(), os.Getegid()
	var out []nsLevel
	if uid == 0 {
		// Best: the worker is nobody on the host too, so even without
		// Landlock it cannot open the gateway's root-owned files.
		out = append(out, nsLevel{names: allNamespaces, flags: syscall.CLONE_NEWUSER | others,
			hostUID: workerID, hostGID: workerID, privileged: true})
	}
	out = append(out, nsLevel{names: allNamespaces, flags: syscall.CLONE_NEWUSER | others, hostUID: uid, hostGID: gid})
	if uid == 0 {
		// No user namespaces here (the worker then becomes nobody itself).
		out = append(out, nsLevel{names: []string{"net", "mount", "pid", "ipc"}, flags: others,
			why: "no user namespace (refused by the host)"})
	}
	return append(out, none)
}

// protectParent makes the gateway's own process non-dumpable: its
// /proc/<pid>/environ, mem and maps are then readable only with
// CAP_SYS_PTRACE, which no worker has. Only a root gateway does it: for an
// unprivileged one it would also make its children's uid_map files
// root-owned, so that it could no longer create user namespaces for them.
func protectParent(mode ConfinementMode) {
	if mode != ConfinementOff && os.Geteuid() == 0 {
		_ = unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0)
	}
}

// hardenProcess applies the worker's process-wide restrictions and returns
// the protocol streams. Most of it happened before the Go runtime started
// (confine_linux.c); a process that was not started as a worker gets the
// same basics here.
func hardenProcess() (in, out *os.File, err error) {
	os.Clearenv()
	if in, out, ok := earlyProtocol(); ok {
		return in, out, nil
	}
	if err := os.Chdir("/"); err != nil {
		return nil, nil, err
	}
	// No core dumps: a 1 GB worker aborting on a hostile script must not
	// fill the disk (nor leave script data around).
	_ = syscall.Setrlimit(syscall.RLIMIT_CORE, &syscall.Rlimit{})
	// Never gain privileges through exec (there is no exec from JavaScript,
	// this only narrows what an engine exploit could do).
	_, _, _ = syscall.RawSyscall6(syscall.SYS_PRCTL, 38 /* PR_SET_NO_NEW_PRIVS */, 1, 0, 0, 0, 0)
	// Be the OOM killer's first choice, before the gateway.
	_ = os.WriteFile("/proc/self/oom_score_adj", []byte("1000"), 0)

	closeInheritedFDs()

	// Move the protocol to private close-on-exec descriptors, then point
	// fd 0 at /dev/null and fd 1 at stderr.
	inFD, err := dupCloexec(0)
	if err != nil {
		return nil, nil, err
	}
	outFD, err := dupCloexec(1)
	if err != nil {
		return nil, nil, err
	}
	null, err := syscall.Open("/dev/null", syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return nil, nil, err
	}
	if err := syscall.Dup3(null, 0, 0); err != nil {
		return nil, nil, err
	}
	syscall.Close(null)
	if err := syscall.Dup3(2, 1, 0); err != nil {
		return nil, nil, err
	}
	return protocolFile(inFD, "protocol-in"), protocolFile(outFD, "protocol-out"), nil
}

// protocolFile wraps a protocol descriptor. Non-blocking descriptors go
// through Go's poller instead of parking a thread in read(2).
func protocolFile(fd int, name string) *os.File {
	_ = syscall.SetNonblock(fd, true)
	return os.NewFile(uintptr(fd), name)
}

func dupCloexec(fd int) (int, error) {
	r, _, errno := syscall.Syscall(syscall.SYS_FCNTL, uintptr(fd), syscall.F_DUPFD_CLOEXEC, 3)
	if errno != 0 {
		return -1, fmt.Errorf("dup fd %d: %w", fd, errno)
	}
	return int(r), nil
}

// closeInheritedFDs closes descriptors above 2 that lack close-on-exec.
// Everything this process opened itself (Go's runtime, V8) is close-on-exec,
// so such a descriptor can only have been inherited from the parent: a
// parent-side library that forgot O_CLOEXEC must not leak a file, socket or
// pipe into the sandbox.
func closeInheritedFDs() {
	entries, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return
	}
	for _, e := range entries {
		fd, err := strconv.Atoi(e.Name())
		if err != nil || fd <= 2+2*workerLaneCount() { // stdio and the call lanes
			continue
		}
		flags, _, errno := syscall.RawSyscall(syscall.SYS_FCNTL, uintptr(fd), syscall.F_GETFD, 0)
		if errno == 0 && flags&syscall.FD_CLOEXEC == 0 {
			syscall.Close(fd)
		}
	}
}

var pageSize = int64(os.Getpagesize())

// readRSS returns the resident set size of pid in bytes.
func readRSS(pid int) (int64, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/statm")
	if err != nil {
		return 0, err
	}
	f := bytes.Fields(b)
	if len(f) < 2 {
		return 0, errors.New("short statm")
	}
	pages, err := strconv.ParseInt(string(f[1]), 10, 64)
	if err != nil {
		return 0, err
	}
	return pages * pageSize, nil
}

// readAnonRSS returns the resident memory of process pid that is its own
// (resident minus file-backed shared pages: the anonymous memory V8's heaps
// and the Go runtime live in), from /proc/pid/statm.
func readAnonRSS(pid int) (int64, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/statm")
	if err != nil {
		return 0, err
	}
	f := bytes.Fields(b)
	if len(f) < 3 {
		return 0, errors.New("short statm")
	}
	resident, err := strconv.ParseInt(string(f[1]), 10, 64)
	if err != nil {
		return 0, err
	}
	shared, err := strconv.ParseInt(string(f[2]), 10, 64)
	if err != nil {
		return 0, err
	}
	return (resident - shared) * pageSize, nil
}

// oomKills returns the oom_kill counter of this process's cgroup (v2), which
// counts processes of the cgroup killed by any OOM killer. ok is false when
// it cannot be read (cgroup v1, no /sys).
func oomKills() (n int64, ok bool) {
	cg, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return 0, false
	}
	var path string
	for _, line := range strings.Split(string(cg), "\n") {
		if rest, found := strings.CutPrefix(line, "0::"); found {
			path = rest
			break
		}
	}
	if path == "" {
		return 0, false
	}
	ev, err := os.ReadFile(filepath.Join("/sys/fs/cgroup", path, "memory.events"))
	if err != nil {
		return 0, false
	}
	for _, line := range strings.Split(string(ev), "\n") {
		if v, found := strings.CutPrefix(line, "oom_kill "); found {
			n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			return n, err == nil
		}
	}
	return 0, false
}

// pipeBytes is a pipe's usual capacity, which a worker's stdin returns to
// once its start-up is read.
const pipeBytes = 64 << 10

// fitPipe sets the capacity of the pipe f writes to (or reads from) to at
// least n bytes, so that n bytes written at once need no reader to make
// room: the init frame and the 233 KB V8 snapshot went in 64 KB turns,
// each waiting for a wake-up of the worker and then of the parent (8 ms
// of a worker's start at load 11). Best effort: the kernel may refuse
// (fs.pipe-max-size, or a user's pipe pages over fs.pipe-user-pages-soft)
// and the write then goes in turns as before.
func fitPipe(f *os.File, n int) {
	rc, err := f.SyscallConn()
	if err != nil {
		return
	}
	_ = rc.Control(func(fd uintptr) {
		_, _ = unix.FcntlInt(fd, unix.F_SETPIPE_SZ, n)
	})
}

// workerTimerSlack is the timer slack of every worker process's threads.
//
// Go's sysmon thread sleeps deeply while a process is idle; the first
// system or cgo call after that wakes it, and it then polls every 20 µs
// (nanosleep) for as long as any of the process's Ps is busy. With the
// kernel's default slack (50 µs) a tier-3 run and the preparation of the
// next context cost a worker ~22 such wake-ups, each a context switch and
// ~20 µs of CPU: a fifth of its CPU per run (issue 44, bench/RESULTS.md
// "Cheaper context preparation"). With 250 µs of slack the kernel may
// coalesce each poll with the worker's other wake-ups. The price: a
// worker's timers (a run's deadline, the 2 ms re-termination, the 10 ms
// heap poll) may fire up to this much later, and so may sysmon's handing
// of a P held by a long cgo call to waiting goroutines when both Ps are
// busy; nothing on a run's path waits on a timer (frames and lanes wake
// on their descriptors).
const workerTimerSlack = 250 * time.Microsecond

// setWorkerTimerSlack sets the calling thread's timer slack to
// workerTimerSlack. The spawner's thread, which forks every worker, calls
// it: a child's threads start with their creator's slack, and execve keeps
// it, so every thread of a worker has it from its first instruction (the
// Go runtime starts sysmon before any of the worker's own code could set
// it). The gateway's other threads keep theirs.
func setWorkerTimerSlack() error {
	return unix.Prctl(unix.PR_SET_TIMERSLACK, uintptr(workerTimerSlack.Nanoseconds()), 0, 0, 0)
}
