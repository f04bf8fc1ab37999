package checkworker

import (
	"context"
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/isogate/isogate/internal/testutil"
	"github.com/isogate/isogate/internal/typecheck"
	"github.com/isogate/isogate/v8sandbox"
)

// BenchmarkCheckerWorker compares a warm check of a 40-line program
// against 100 tools' declarations in this process (thread isolation) and
// in the confined checker worker (process isolation), alternating the two
// in each iteration so that both see the same machine load. It reports
// each one's median and the worker's extra cost; the start of each (the
// worker's: process, confinement, compiler) is logged once.
func BenchmarkCheckerWorker(b *testing.B) {
	decls, prog := typecheck.BenchDeclarations(), typecheck.BenchProgram()
	ctx := context.Background()
	b.StopTimer()
	t0 := time.Now()
	local := typecheck.New(typecheck.Options{Timeout: time.Minute})
	defer local.Close()
	if err := local.Warm(ctx); err != nil {
		b.Fatal(err)
	}
	localStart := time.Since(t0)
	t0 = time.Now()
	remote := NewChecker(CheckerOptions{Command: workerCommand(b), Logger: testutil.QuietLogger(b), Timeout: time.Minute})
	defer remote.Close()
	if err := remote.Warm(ctx); err != nil {
		b.Fatal(err)
	}
	remoteStart := time.Since(t0)
	b.Logf("start: in process %v (compiler and libraries), worker %v (process, confinement, compiler and libraries); worker RSS %d MB",
		localStart.Round(time.Millisecond), remoteStart.Round(time.Millisecond), remote.Stats().Workers[0].RSSBytes>>20)
	b.Run("100tools-40lines", func(b *testing.B) { alternate(b, local, remote, decls, prog) })
	b.Run("1tool-1line", func(b *testing.B) { alternate(b, local, remote, checkerDecls, "return await counter.bump({id: 'a'})") })
	b.Run("round-trip", func(b *testing.B) { roundTrip(b, remote, checkerDecls, "return await counter.bump({id: 'a'})") })
}

// roundTrip reports what the worker adds to a check, free of the noise of
// comparing two checks: the median of each check's wall time in the
// parent minus the time the worker spent on it.
func roundTrip(b *testing.B, remote *Checker, decls typecheck.Declarations, prog string) {
	ctx := context.Background()
	if _, err := remote.Check(ctx, decls, prog, false); err != nil { // the worker holds decls
		b.Fatal(err)
	}
	src, err := json.Marshal(checkRequest{Decls: decls.ID, Program: prog})
	if err != nil {
		b.Fatal(err)
	}
	var extra []time.Duration
	b.ResetTimer()
	for range b.N {
		start := time.Now()
		res, err := remote.pool.Run(ctx, v8sandbox.Job{Source: string(src), Limits: v8sandbox.Limits{Timeout: time.Minute}}, nil)
		if err != nil {
			b.Fatal(err)
		}
		extra = append(extra, time.Since(start)-res.Duration)
	}
	b.StopTimer()
	slices.Sort(extra)
	b.ReportMetric(float64(extra[len(extra)/2].Microseconds())/1000, "worker-extra-p50-ms")
}

// alternate checks prog with local and remote in turn, b.N times each,
// and reports each one's median and the difference.
func alternate(b *testing.B, local, remote typecheck.Service, decls typecheck.Declarations, prog string) {
	ctx := context.Background()
	for _, c := range []typecheck.Service{local, remote} {
		if rep, err := c.Check(ctx, decls, prog, false); err != nil || len(rep.Diagnostics) > 0 {
			b.Fatalf("%v %+v", err, rep)
		}
	}
	var inProc, inWorker []time.Duration
	b.ResetTimer()
	for i := range b.N {
		order := []typecheck.Service{local, remote}
		if i%2 == 1 {
			order[0], order[1] = remote, local
		}
		for _, c := range order {
			start := time.Now()
			if _, err := c.Check(ctx, decls, prog, false); err != nil {
				b.Fatal(err)
			}
			if c == local {
				inProc = append(inProc, time.Since(start))
			} else {
				inWorker = append(inWorker, time.Since(start))
			}
		}
	}
	b.StopTimer()
	p50 := func(d []time.Duration) time.Duration { slices.Sort(d); return d[len(d)/2] }
	lp, rp := p50(inProc), p50(inWorker)
	b.ReportMetric(float64(lp.Microseconds())/1000, "in-process-p50-ms")
	b.ReportMetric(float64(rp.Microseconds())/1000, "worker-p50-ms")
	b.ReportMetric(float64(rp-lp)/float64(time.Millisecond), "worker-extra-ms")
}
