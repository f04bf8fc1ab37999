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
// futexes, sleeping, scheduling, signal masks and handlers, reading and
// writing descriptors the worker holds, and the two probes V8 makes once
// (uname, pkey_alloc), plus getrandom, which seeds V8's random number
// generators (see confine_entropy_linux.cc). Three calls the corpus does not reach but the
// runtimes make on known paths: exit (a locked Go thread ends with its
// goroutine, as when an isolate is recycled), rt_sigaction (Go's crash
// path resets a handler before re-raising) and mremap (glibc's realloc of
// large blocks); and restart_syscall, which the kernel itself issues to
// resume a timed sleep that a signal (Go's preemption) interrupted.
var seccompAllow = []string{
	"brk", "mmap", "munmap", "mprotect", "madvise", "mremap", "pkey_alloc",
	"futex", "nanosleep", "sched_yield", "sched_getaffinity", "set_robust_list", "rseq",
	"getpid", "gettid", "uname",
	"rt_sigprocmask", "rt_sigreturn", "rt_sigaction", "sigaltstack",
	"read", "write", "close", "epoll_pwait", "getrandom",
	"exit", "exit_group", "restart_syscall",
}

// seccompRefused fail with EPERM even in test binaries: the runtimes may
// make them and cope with the refusal. Both take a path, and the filter
// answers before the kernel looks the path up, so neither can tell whether
// a file exists: newfstatat (glibc's fstat of a file it opened), and
// openat with any flags, O_PATH included (Landlock alone would answer
// EACCES for an existing file and ENOENT for a missing one, and lets O_PATH
// through). Nothing a serving worker needs opens a file: V8 seeds its
// random number generators through getrandom (confine_entropy_linux.cc),
// and glibc's look at /proc/self/maps for the main thread's stack copes
// with the refusal. readlink is ICU's look for the host's time zone
// (/etc/localtime) when a program formats a date; it then falls back to
// UTC. open, openat2, creat, statx, access and the other path calls are
// outside the allowlist: EPERM too, before any lookup.
var seccompRefused = []string{"newfstatat", "openat", "readlink", "readlinkat"}

// namespaceFlags are clone's flags that create namespaces.
const namespaceFlags = unix.CLONE_NEWNS | unix.CLONE_NEWUTS | unix.CLONE_NEWIPC | unix.CLONE_NEWUSER |
	unix.CLONE_NEWPID | unix.CLONE_NEWNET | unix.CLONE_NEWCGROUP

// seccompConditional is how many calls installSeccomp allows with
// conditions on their arguments (added to len(seccompAllow) in the report).
const seccompConditional = 5

// installSeccomp loads the filter for every thread. kill makes a call
// outside the list kill the process instead of failing with EPERM.
func installSeccomp(kill bool) error {
	self := uint64(os.Getpid())  // the worker's tgid, in its own pid namespace if it has one
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
		// Signals to its own thread group only: kill(getpid(), sig) (Go's
		// runtime raises a crash signal so) and tgkill(getpid(), tid, sig)
		// (Go's preemption of its own threads, glibc's raise and
		// pthread_kill); the kernel refuses a tid outside the group named
		// (ESRCH). tkill, rt_sigqueueinfo, rt_tgsigqueueinfo and
		// pidfd_send_signal name no thread group, or take a caller-built
		// siginfo, and neither runtime uses them: outside the list.
		{Action: seccomp.ActionAllow, NamesWithCondtions: []seccomp.NameWithConditions{
			{Name: "kill", Conditions: seccomp.ArgumentConditions{{Argument: 0, Operation: seccomp.Equal, Value: self}}},
			{Name: "tgkill", Conditions: seccomp.ArgumentConditions{{Argument: 0, Operation: seccomp.Equal, Value: self}}},
		}},
		{Action: seccomp.ActionErrno, Names: seccompRefused},
	}
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
	setEntropySource()
	if want.seccomp {
		action := "EPERM"
		if kill {
			action = "kill"
		}
		if err := installSeccomp(kill); err != nil {
			f.SeccompNote = err.Error()
		} else {
			f.Seccomp = true
			f.SeccompNote = fmt.Sprintf("%d system calls allowed, all threads, violations: %s", len(seccompAllow)+seccompConditional, action)
		}
	}
	return &f
}
