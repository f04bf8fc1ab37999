package v8sandbox

// #cgo CXXFLAGS: -fno-rtti -fPIC -std=c++17 -O2 -Wall
// #include "lock.h"
import "C"

import v8 "rogchap.com/v8go"

// isolateLock holds an isolate's lock on one OS thread.
//
// Each v8go call takes the isolate's v8::Locker. Taken at the top level,
// the locker sets the thread up for the isolate (V8 computes the thread's
// stack bounds, a system call, and its thread-local state) and tears that
// down again when the call returns: about a microsecond per call, and an
// async host call makes a dozen calls. While the lock is held here, the
// same calls nest in it at no such cost. It also keeps an interrupt (a
// termination) requested between two calls pending until JavaScript runs
// again, where a fresh top-level locker would clear it.
//
// The goroutine must stay locked to its thread from lockIsolate to
// release, and make no v8go call after release until it locks again.
type isolateLock struct{ l *C.isogate_lock }

// lockIsolate takes iso's lock on the calling thread.
func lockIsolate(iso *v8.Isolate) isolateLock {
	return isolateLock{C.isogate_lock_take(rawIsolate(iso))}
}

// release releases the lock (once; later calls do nothing).
func (k *isolateLock) release() {
	if k.l != nil {
		C.isogate_lock_release(k.l)
		k.l = nil
	}
}
