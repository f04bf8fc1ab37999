package v8sandbox

// #cgo CXXFLAGS: -fno-rtti -fPIC -std=c++17 -O2 -Wall
// #include "guard.h"
import "C"

import (
	"reflect"
	"sync"
	"time"
	"unsafe"

	v8 "rogchap.com/v8go"
)

var initOnce sync.Once

// initV8 sets process-wide V8 flags and installs the counting ArrayBuffer
// allocator. v8go creates its allocator when the first isolate is made, so
// V8 is initialised (platform, then v8go's allocator) through v8go's own
// initializer, which its NewIsolate calls: making and disposing an isolate
// from V8's built-in snapshot only for that cost every sandbox worker's
// start ~1–2 ms of CPU (issue 44).
func initV8() {
	initOnce.Do(func() {
		v8.SetFlags(
			"--no-expose-wasm",        // deny by default: no WebAssembly
			"--max-semi-space-size=8", // keep the young generation small (MB)
			"--stack-size=984",        // default, stated explicitly (KB)
		)
		v8goInitialize()
		C.isogate_install_allocator()
	})
}

// v8goInitialize is rogchap.com/v8go v0.9.0's unexported
// initializeIfNecessary: V8's platform and v8go's default allocator, once.
//
//go:linkname v8goInitialize rogchap.com/v8go.initializeIfNecessary
func v8goInitialize()

// rawIsolate returns the v8::Isolate* behind a v8go isolate (its unexported
// ptr field), which guard.cc needs.
func rawIsolate(iso *v8.Isolate) unsafe.Pointer {
	f := reflect.ValueOf(iso).Elem().FieldByName("ptr")
	return *(*unsafe.Pointer)(unsafe.Pointer(f.UnsafeAddr()))
}

// heapGuard caps one isolate's heap: V8 itself stops the old generation at
// the limit (the near-heap-limit callback), and a poll while a run executes
// ends it when the whole heap passes the limit plus [heapSlackMB], which
// catches the single large allocations V8 lets past its own limit.
type heapGuard struct{ h *C.isogate_heap }

// heapSlackMB is the room above the cap for the young generation (two
// --max-semi-space-size spaces) and for garbage not yet collected.
const heapSlackMB = 32

// heapPollEvery is how often a running script's heap is compared with its
// hard limit.
const heapPollEvery = 10 * time.Millisecond

func installHeapGuard(iso *v8.Isolate, limitMB int) heapGuard {
	return heapGuard{C.isogate_heap_install(rawIsolate(iso), C.size_t(limitMB)<<20, C.size_t(limitMB+heapSlackMB)<<20)}
}

func (g heapGuard) hit() bool { return C.isogate_heap_hit(g.h) != 0 }

// checkNow compares the heap with the hard limit while no script runs (a
// builtin such as Array.prototype.fill can allocate and finish between two
// polls) and marks the hit when it is passed.
func (g heapGuard) checkNow() bool { return C.isogate_heap_check_now(g.h) != 0 }

// watch polls the heap every heapPollEvery until the returned stop is
// called; after stop returns, no poll is made, so the isolate may then be
// disposed.
func (g heapGuard) watch() (stop func()) {
	var (
		mu      sync.Mutex
		stopped bool
		timer   *time.Timer
	)
	mu.Lock()
	defer mu.Unlock()
	timer = time.AfterFunc(heapPollEvery, func() {
		mu.Lock()
		defer mu.Unlock()
		if stopped {
			return
		}
		C.isogate_heap_poll(g.h)
		timer.Reset(heapPollEvery)
	})
	return func() {
		mu.Lock()
		defer mu.Unlock()
		stopped = true
		timer.Stop()
	}
}

// used returns the isolate's used heap in bytes, as the hard limit counts
// it (the used size of V8's heap statistics).
func (g heapGuard) used() uint64 { return uint64(C.isogate_heap_used(g.h)) }

// free releases the guard; call only after the isolate is disposed.
func (g heapGuard) free() { C.isogate_heap_free(g.h) }

func disallowAtomicsWait(iso *v8.Isolate) { C.isogate_disallow_atomics_wait(rawIsolate(iso)) }

// bufferBudget charges ArrayBuffer memory allocated on one OS thread.
type bufferBudget struct{ b *C.isogate_budget }

// newBufferBudget returns a budget; bind it to a thread before use.
func newBufferBudget() bufferBudget {
	return bufferBudget{C.isogate_budget_new()}
}

// bind makes b the budget charged for ArrayBuffer allocations on the
// calling OS thread; the caller must be locked to its thread while it uses
// the isolate.
func (b bufferBudget) bind() { C.isogate_budget_bind(b.b) }

func (b bufferBudget) setLimitMB(mb int) { C.isogate_budget_set_limit(b.b, C.int64_t(mb)<<20) }

func (b bufferBudget) used() int64 { return int64(C.isogate_budget_used(b.b)) }

// lowMemory makes iso collect everything it can now.
func lowMemory(iso *v8.Isolate) { C.isogate_low_memory(rawIsolate(iso)) }
