package typecheck

import (
	"context"
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

// benchWarmUp is how many other programs a checker checks before a
// benchmark measures it warm (see BenchWarmUpProgram).
const benchWarmUp = 300

// BenchmarkWarmCheck is a warm check of a 40-line program against 100
// tools' declarations (parsed once, before the loop), by a checker that
// checked benchWarmUp other programs first.
func BenchmarkWarmCheck(b *testing.B) {
	decls, prog := BenchDeclarations(), BenchProgram()
	ctx := context.Background()
	if rep, err := testChecker.Check(ctx, decls, prog, false); err != nil || len(rep.Diagnostics) > 0 {
		b.Fatalf("%v %+v", err, rep)
	}
	for i := range benchWarmUp {
		if rep, err := testChecker.Check(ctx, decls, BenchWarmUpProgram(i), false); err != nil || len(rep.Diagnostics) > 0 {
			b.Fatalf("warm-up %d: %v %+v", i, err, rep)
		}
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
	decls, prog := BenchDeclarations(), BenchProgram()
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

// BenchmarkCheckerFairness is issue 42's goal for the checker's fair share
// ([MeasureFairness]; goal: a ratio of at most 2). One run measures it
// whole (-benchtime=1x).
func BenchmarkCheckerFairness(b *testing.B) {
	c := New(Options{Timeout: time.Minute})
	defer c.Close()
	b.ResetTimer()
	for range b.N {
		f, err := MeasureFairness(context.Background(), c, benchWarmUp)
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(f.Quiet.Microseconds())/1000, "quiet-p50-ms")
		b.ReportMetric(float64(f.Bombed.Microseconds())/1000, "bombed-p50-ms")
		b.ReportMetric(f.Ratio(), "p50-ratio")
		b.ReportMetric(float64(f.TimedOut), "bombs-timed-out")
		b.ReportMetric(float64(f.Bombs), "bombs")
	}
}
