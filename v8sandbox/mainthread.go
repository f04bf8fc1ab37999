package v8sandbox

import "runtime"

// init pins the main goroutine to the process's main thread, so that no
// worker can ever be locked onto it. V8 computes the stack bounds of a
// thread each time it enters an isolate, and for the main thread glibc finds
// them by parsing /proc/self/maps: every V8 call made there costs ~100 µs
// instead of ~1 µs.
func init() { runtime.LockOSThread() }
