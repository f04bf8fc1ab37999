package v8sandbox_test

import (
	"context"
	"runtime"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/isogate/isogate/internal/jsvalue"
	"github.com/isogate/isogate/v8sandbox"
)

// snapshotModes are the two ways an isolate starts, measured side by side
// in one binary: from the startup snapshot (bootstrap.js and the value kit
// already run) or from V8's own, running them in every context.
var snapshotModes = []struct {
	name string
	off  bool
}{{"snapshot", false}, {"no-snapshot", true}}

// kitPrelude is the smallest prelude code mode and run_code build: the
// value kit with the sanitizer installed as the result serializer.
var kitPrelude = jsvalue.Scope("installSerializer(makeSanitizer({}));")

// BenchmarkNewContext measures what a run pays for its context: a fresh
// context with the host functions installed ("bare") and the kit's prelude
// run ("kit"). cpu-µs/op is the V8 thread's CPU time, steadier than wall
// time on a shared machine.
func BenchmarkNewContext(b *testing.B) {
	for _, mode := range snapshotModes {
		for _, p := range []struct{ name, prelude string }{{"bare", ""}, {"kit", kitPrelude}} {
			b.Run(mode.name+"/"+p.name, func(b *testing.B) {
				defer func(old bool) { *v8sandbox.SnapshotOff = old }(*v8sandbox.SnapshotOff)
				*v8sandbox.SnapshotOff = mode.off
				pool := v8sandbox.NewPool(v8sandbox.Options{Workers: 1})
				defer pool.Close()
				runtime.LockOSThread() // PrepareContexts runs on this thread
				defer runtime.UnlockOSThread()
				var cpu time.Duration
				start := threadCPU()
				if err := v8sandbox.PrepareContexts(pool, p.prelude, b.N, func() {}); err != nil {
					b.Fatal(err)
				}
				cpu = threadCPU() - start
				b.ReportMetric(float64(cpu.Microseconds())/float64(b.N), "cpu-µs/op")
			})
		}
	}
}

// BenchmarkTrivialRunSnapshot is a trivial run with the kit's prelude
// through the pool (its next context prepared between runs, as in
// production), with and without the snapshot.
func BenchmarkTrivialRunSnapshot(b *testing.B) {
	for _, mode := range snapshotModes {
		b.Run(mode.name, func(b *testing.B) {
			defer func(old bool) { *v8sandbox.SnapshotOff = old }(*v8sandbox.SnapshotOff)
			*v8sandbox.SnapshotOff = mode.off
			pool := v8sandbox.NewPool(v8sandbox.Options{Workers: 1})
			defer pool.Close()
			job := v8sandbox.Job{Source: `1 + 1`, AwaitResult: true, Prelude: kitPrelude}
			for b.Loop() {
				if _, err := pool.Run(context.Background(), job, nil); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// threadCPU is the calling thread's CPU time (the caller stays locked to
// its thread while it measures).
func threadCPU() time.Duration {
	var ts syscall.Timespec
	const clockThreadCPUTime = 3 // CLOCK_THREAD_CPUTIME_ID
	syscall.Syscall(syscall.SYS_CLOCK_GETTIME, clockThreadCPUTime, uintptr(unsafe.Pointer(&ts)), 0)
	return time.Duration(ts.Nano())
}
