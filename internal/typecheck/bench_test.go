package typecheck

import (
	"context"
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"
)

// cpuTime is the process's CPU time so far (user and system, every
// thread): on a shared machine it says what a check costs better than the
// wall clock, which counts the time other processes ran.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// hundredTools declares 100 tools over 10 backends, each with three
// parameters (one required) and a declared output.
func hundredTools() Declarations {
	var b strings.Builder
	for i := range 10 {
		fmt.Fprintf(&b, "interface IsogateBackend_%d {\n", i)
		for j := range 10 {
			fmt.Fprintf(&b, "  tool%d(args: { id: string; limit?: number; tags?: string[] }): Promise<{ items: { id: string; n: number }[] }>;\n", j)
		}
		fmt.Fprintf(&b, "}\ndeclare var b%d: IsogateBackend_%d;\n", i, i)
	}
	return Declarations{ID: "bench-100", Text: b.String()}
}

// fortyLines is a 40-line program calling a dozen tools.
func fortyLines() string {
	var b strings.Builder
	b.WriteString("const out: Record<string, number> = {};\n")
	for i := range 13 {
		fmt.Fprintf(&b, "const r%d = await b%d.tool%d({ id: 'x%d', limit: %d });\n", i, i%10, i%10, i, i)
		fmt.Fprintf(&b, "for (const it of r%d.items) out[it.id] = (out[it.id] ?? 0) + it.n;\n", i)
		fmt.Fprintf(&b, "console.log('step %d', Object.keys(out).length);\n", i)
	}
	b.WriteString("return out;\n")
	return b.String()
}

// BenchmarkWarmCheck is a warm check of a 40-line program against 100
// tools' declarations (parsed once, before the loop).
func BenchmarkWarmCheck(b *testing.B) {
	decls, prog := hundredTools(), fortyLines()
	ctx := context.Background()
	if rep, err := testChecker.Check(ctx, decls, prog, false); err != nil || len(rep.Diagnostics) > 0 {
		b.Fatalf("%v %+v", err, rep)
	}
	b.ResetTimer()
	cpu := cpuTime(b)
	for range b.N {
		if _, err := testChecker.Check(ctx, decls, prog, false); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(cpuTime(b)-cpu)/float64(b.N)/1e6, "cpu-ms/op")
	if heap, err := testChecker.HeapUsed(ctx); err == nil {
		b.ReportMetric(float64(heap)/(1<<20), "heapMB")
	}
}

// BenchmarkColdCheck is a new checker's first check: loading the
// compiler and the libraries, then the check.
func BenchmarkColdCheck(b *testing.B) {
	decls, prog := hundredTools(), fortyLines()
	cpu := cpuTime(b)
	for range b.N {
		c := New(Options{Timeout: 60e9})
		if _, err := c.Check(context.Background(), decls, prog, false); err != nil {
			b.Fatal(err)
		}
		c.Close()
	}
	b.ReportMetric(float64(cpuTime(b)-cpu)/float64(b.N)/1e6, "cpu-ms/op")
}
