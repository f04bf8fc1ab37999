package v8sandbox

import (
	"runtime"
	"testing"

	v8 "rogchap.com/v8go"
)

// The hard heap limit sums the used size of V8's heap spaces itself (V8's
// own heap statistics walk far more than that): the sum must be the used
// heap size V8 reports, on an empty isolate and on one holding megabytes.
func TestHeapGuardUsedIsHeapStatisticsUsed(t *testing.T) {
	initV8()
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	iso := v8.NewIsolate()
	defer iso.Dispose()
	g := installHeapGuard(iso, 64)
	defer g.free()
	ctx := v8.NewContext(iso)
	defer ctx.Close()
	for _, src := range []string{"1", "globalThis.keep = Array.from({length: 200000}, (_, i) => ({i, s: 'x' + i}))"} {
		if _, err := ctx.RunScript(src, "fill.js"); err != nil {
			t.Fatal(err)
		}
		want := iso.GetHeapStatistics().UsedHeapSize
		if got := g.used(); got != want {
			t.Fatalf("after %.20q: guard counts %d bytes, V8's statistics %d", src, got, want)
		}
		if want < 1<<20 && len(src) > 1 {
			t.Fatalf("after %.20q: only %d bytes used: the test filled nothing", src, want)
		}
	}
}
