package v8sandbox

import "runtime"

// init pins the main goroutine to the process's main thread, so that no
// worker can ever be locked onto it. V8 computes the stack bounds of a
// thread each time it enters an isolate, and for the main thread glibc finds
// them by parsing /proc/self/maps: every V8 call made there costs ~100 µs
// instead of ~1 µs.
func init() { runtime.LockOSThread() }

// serveOffMainThread runs f on a goroutine of its own when the caller is
// the main goroutine (a command's main calling [Pool.Run]): locked to the
// main thread, every V8 call of the run would pay the stack-bounds lookup
// above (a trivial run took 3 ms instead of 0.2 ms). Any other caller runs
// f itself, without a handoff.
func serveOffMainThread(f func() response) response {
	if !onMainThread() {
		return f()
	}
	done := make(chan response, 1)
	go func() { done <- f() }()
	return <-done
}
