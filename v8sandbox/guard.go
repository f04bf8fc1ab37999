package v8sandbox

// #cgo CXXFLAGS: -fno-rtti -fPIC -std=c++17 -O2 -Wall
// #include "guard.h"
import "C"

import (
	"reflect"
	"sync"
	"unsafe"

	v8 "rogchap.com/v8go"
)

var initOnce sync.Once

// initV8 sets process-wide V8 flags and installs the counting ArrayBuffer
// allocator. v8go creates its allocator when the first isolate is made, so
// a throwaway isolate is created (and disposed) first.
func initV8() {
	initOnce.Do(func() {
		v8.SetFlags(
			"--no-expose-wasm",        // deny by default: no WebAssembly
			"--max-semi-space-size=8", // keep the young generation small (MB)
			"--stack-size=984",        // default, stated explicitly (KB)
		)
		iso := v8.NewIsolate()
		iso.Dispose()
		C.isogate_install_allocator()
	})
}

// rawIsolate returns the v8::Isolate* behind a v8go isolate (its unexported
// ptr field), which guard.cc needs.
func rawIsolate(iso *v8.Isolate) unsafe.Pointer {
	f := reflect.ValueOf(iso).Elem().FieldByName("ptr")
	return *(*unsafe.Pointer)(unsafe.Pointer(f.UnsafeAddr()))
}

// heapGuard caps one isolate's old-generation heap.
type heapGuard struct{ h *C.isogate_heap }

func installHeapGuard(iso *v8.Isolate, limitMB int) heapGuard {
	return heapGuard{C.isogate_heap_install(rawIsolate(iso), C.size_t(limitMB)<<20)}
}

func (g heapGuard) hit() bool { return C.isogate_heap_hit(g.h) != 0 }

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
