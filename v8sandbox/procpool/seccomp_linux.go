package procpool

import (
	"fmt"
	"os"

	seccomp "github.com/elastic/go-seccomp-bpf"
	"golang.org/x/sys/unix"
)

// The seccomp layer: an allowlist of the system calls a worker provably
// makes once it serves, derived from strace runs of the whole sandbox test
// corpus (v8sandbox/sandboxtest and the hostile corpus, see
// docs/security.md for how to redo it). It is installed with TSYNC, so it
// binds every thread of the worker: Go's, V8's platform workers and the
// isolate threads, and every thread they create later.
//
// A call outside the list fails with EPERM in a released binary: a call
// the traces missed degrades one run instead of killing its neighbours.
// In a test binary it kills the worker (SECCOMP_RET_KILL_PROCESS), so that
// a missing entry fails the suite loudly.

// seccompAllow are allowed with any arguments. The traced set: memory,
// futexes, sleeping, scheduling, signals within the process, reading and
// writing descriptors the worker holds, and the two probes V8 makes once
// (uname, pkey_alloc). Three calls the corpus does not reach but the
// runtimes make on known paths: exit (a locked Go thread ends with its
// goroutine, as when an isolate is recycled), rt_sigaction (Go's crash
// path resets a handler before re-raising) and mremap (glibc's realloc of
// large blocks); and restart_syscall, which the kernel itself issues to
// resume a timed sleep that a signal (Go's preemption) interrupted.
var seccompAllow = []string{
	"brk", "mmap", "munmap", "mprotect", "madvise", "mremap", "pkey_alloc",
	"futex", "nanosleep", "sched_yield", "sched_getaffinity", "set_robust_list", "rseq",
	"getpid", "gettid", "uname",
	"rt_sigprocmask", "rt_sigreturn", "rt_sigaction", "sigaltstack", "tgkill",
	"read", "write", "close", "epoll_pwait",
	"exit", "exit_group", "restart_syscall",
}

// seccompRefused fail with EPERM even in test binaries: the runtimes make
// them and cope with the refusal. newfstatat is glibc's fstat of a file it
// opened, but with a path it would tell whether any file exists (Landlock
// does not cover metadata).
var seccompRefused = []string{"newfstatat"}

// seccompOpen is allowed only under Landlock, which then refuses every
// path but a read of /dev/urandom (V8 seeds its random number generators
// from it); without Landlock it is refused and V8 seeds from the clock.
var seccompOpen = []string{"openat"}

// namespaceFlags are clone's flags that create namespaces.
const namespaceFlags = unix.CLONE_NEWNS | unix.CLONE_NEWUTS | unix.CLONE_NEWIPC | unix.CLONE_NEWUSER |
	unix.CLONE_NEWPID | unix.CLONE_NEWNET | unix.CLONE_NEWCGROUP

// installSeccomp loads the filter for every thread. kill makes a call
// outside the list kill the process instead of failing with EPERM.
func installSeccomp(kill, landlock bool) error {
	deflt := seccomp.ActionErrno // EPERM
	if kill {
		deflt = seccomp.ActionKillProcess
	}
	groups := []seccomp.SyscallGroup{
		{Action: seccomp.ActionAllow, Names: seccompAllow},
		// Threads only: clone must carry CLONE_THREAD (no fork, no new
		// namespaces); clone3 answers ENOSYS, which makes glibc fall back
		// to clone.
		{Action: seccomp.ActionAllow, NamesWithCondtions: []seccomp.NameWithConditions{{
			Name: "clone", Conditions: seccomp.ArgumentConditions{
				{Argument: 0, Operation: seccomp.BitsSet, Value: unix.CLONE_THREAD},
				{Argument: 0, Operation: seccomp.BitsNotSet, Value: namespaceFlags},
			},
		}}},
		{Action: seccomp.Action(unix.SECCOMP_RET_ERRNO | uint32(unix.ENOSYS)), Names: []string{"clone3"}},
		// stdio asks whether /dev/urandom is a terminal (TCGETS); no other
		// ioctl.
		{Action: seccomp.ActionAllow, NamesWithCondtions: []seccomp.NameWithConditions{{
			Name: "ioctl", Conditions: seccomp.ArgumentConditions{{Argument: 1, Operation: seccomp.Equal, Value: unix.TCGETS}},
		}}},
		// A V8 platform thread names itself when it starts (prctl
		// PR_SET_NAME); found by the kill mode, in the kernel's audit log
		// (type 1326, syscall 157), as strace's timing hid it.
		{Action: seccomp.ActionAllow, NamesWithCondtions: []seccomp.NameWithConditions{{
			Name: "prctl", Conditions: seccomp.ArgumentConditions{{Argument: 0, Operation: seccomp.Equal, Value: unix.PR_SET_NAME}},
		}}},
		// Signals to itself only (Go's runtime raises them on a crash).
		{Action: seccomp.ActionAllow, NamesWithCondtions: []seccomp.NameWithConditions{{
			Name: "kill", Conditions: seccomp.ArgumentConditions{{Argument: 0, Operation: seccomp.Equal, Value: uint64(os.Getpid())}},
		}}},
	}
	refused := seccompRefused
	if landlock {
		groups = append(groups, seccomp.SyscallGroup{Action: seccomp.ActionAllow, Names: seccompOpen})
	} else {
		refused = append(refused[:len(refused):len(refused)], seccompOpen...)
	}
	groups = append(groups, seccomp.SyscallGroup{Action: seccomp.ActionErrno, Names: refused})
	return seccomp.LoadFilter(seccomp.Filter{
		NoNewPrivs: true,
		Flag:       seccomp.FilterFlagTSync,
		Policy:     seccomp.Policy{DefaultAction: deflt, Syscalls: groups},
	})
}

// confineWorker completes the worker's confinement (the seccomp filter) and
// returns its report for the ready frame; nil when the process was not
// started as a worker.
func confineWorker(kill bool) *workerFacts {
	want, f := earlyFacts()
	if !isWorker() {
		return nil
	}
	if want.seccomp {
		action := "EPERM"
		if kill {
			action = "kill"
		}
		if err := installSeccomp(kill, f.LandlockFS); err != nil {
			f.SeccompNote = err.Error()
		} else {
			f.Seccomp = true
			f.SeccompNote = fmt.Sprintf("%d system calls allowed, all threads, violations: %s", len(seccompAllow)+5, action)
		}
	}
	return &f
}
