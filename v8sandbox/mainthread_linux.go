package v8sandbox

import "syscall"

// onMainThread reports whether the calling goroutine runs on the process's
// main thread (whose thread id is the process id).
func onMainThread() bool { return syscall.Gettid() == syscall.Getpid() }
