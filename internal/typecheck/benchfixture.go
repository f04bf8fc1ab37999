package typecheck

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// BenchDeclarations are the declarations of issue 36's speed goal: 10
// backends of 10 tools each, as the catalogue declares them. The checker's
// benchmarks (here, in procpool and in the bench module) all check
// [BenchProgram] against them.
func BenchDeclarations() Declarations {
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

// BenchProgram is a 40-line program calling 13 of [BenchDeclarations]'
// tools.
func BenchProgram() string {
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

// BenchWarmUpProgram is the i-th of the programs the benchmarks warm a
// checker up with before they measure it: like [BenchProgram] (40 lines,
// 13 calls of [BenchDeclarations]' tools, loops, object literals) but
// calling other tools with other names and values, so that the measured
// program is not the one the checker was warmed up on. V8 optimizes the
// compiler's hot functions only after a few hundred checks: a new
// checker's first hundred checks of BenchProgram took two to five times as
// long as its checks after three hundred.
func BenchWarmUpProgram(i int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "const acc%d: Record<string, number> = {};\n", i)
	for k := range 13 {
		fmt.Fprintf(&b, "const v%d = await b%d.tool%d({ id: 'w%d-%d', tags: ['t%d'] });\n", k, (i+3*k)%10, (7*i+k)%10, i, k, k)
		if k%2 == 0 {
			fmt.Fprintf(&b, "for (const x of v%d.items) acc%d[x.id] = (acc%d[x.id] ?? 0) + x.n * %d;\n", k, i, i, k+1)
		} else {
			fmt.Fprintf(&b, "v%d.items.forEach((x) => { acc%d[x.id] = (acc%d[x.id] ?? 0) - x.n; });\n", k, i, i)
		}
		fmt.Fprintf(&b, "console.log(`step %d`, Object.keys(acc%d).length);\n", k, i)
	}
	fmt.Fprintf(&b, "return acc%d;\n", i)
	return b.String()
}

// Fairness is what [MeasureFairness] measured: alice's check p50 quiet and
// while bob sends type bombs.
type Fairness struct {
	// Quiet and Bombed are alice's check p50 without and with bob's bombs.
	Quiet, Bombed time.Duration
	// Checks is how many checks alice made under the bombs.
	Checks int
	// Bombs is how many bombs bob sent; TimedOut how many of them were
	// ended past their budget inside the checker.
	Bombs, TimedOut int
}

// Ratio is Bombed ÷ Quiet (issue 42's goal: at most 2).
func (f Fairness) Ratio() float64 { return float64(f.Bombed) / float64(f.Quiet) }

// FairnessBomb is issue 42's type bomb: its check runs past any budget.
const FairnessBomb = "type R<N extends any[]> = N['length'] extends 5000 ? N : R<[...N, 1]>;\nconst x: R<[]> = null as any;"

// MeasureFairness measures issue 42's goal for the checker's fair share
// on c: both lanes are warmed with warmUp programs
// ([BenchWarmUpProgram]), then alice's check of [BenchProgram] is timed
// 40 times quiet, and again while bob sends [FairnessBomb] in a loop, two
// at a time, each to a 2 s budget (ended inside the checker, its lane
// then rebuilt), for as long as it takes 4 bombs to end (at least 40
// checks).
func MeasureFairness(ctx context.Context, c *Checker, warmUp int) (Fairness, error) {
	const checks = 40
	decls, prog := BenchDeclarations(), BenchProgram()
	alice := func() (time.Duration, error) {
		start := time.Now()
		rep, err := c.Submit(ctx, Request{Decls: decls, Program: prog, Principal: "alice", Budget: time.Minute})
		if err != nil || len(rep.Diagnostics) > 0 {
			return 0, fmt.Errorf("alice's check: %v %+v", err, rep)
		}
		return time.Since(start), nil
	}
	// Both lanes built and warm: two principals at once take one each.
	warm := make(chan error, 2)
	for _, p := range []string{"w1", "w2"} {
		go func() {
			for i := range warmUp / 2 {
				if _, err := c.Submit(ctx, Request{Decls: decls, Program: BenchWarmUpProgram(i), Principal: p}); err != nil {
					warm <- fmt.Errorf("warm-up: %w", err)
					return
				}
			}
			warm <- nil
		}()
	}
	if err := errors.Join(<-warm, <-warm); err != nil {
		return Fairness{}, err
	}
	// p50 is alice's median of at least checks checks, taken until
	// enough() (bob's bombs ended, their lanes rebuilt, meanwhile).
	p50 := func(enough func() bool) (time.Duration, int, error) {
		var took []time.Duration
		for len(took) < checks || !enough() {
			d, err := alice()
			if err != nil {
				return 0, 0, err
			}
			took = append(took, d)
		}
		slices.Sort(took)
		return took[len(took)/2], len(took), nil
	}
	var f Fairness
	var err error
	if f.Quiet, _, err = p50(func() bool { return true }); err != nil {
		return f, err
	}
	stop := make(chan struct{})
	var bombs, ended atomic.Int64
	var bob sync.WaitGroup
	for range 2 {
		bob.Add(1)
		go func() {
			defer bob.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				_, err := c.Submit(ctx, Request{Decls: decls, Program: FairnessBomb, Principal: "bob", Budget: 2 * time.Second})
				bombs.Add(1)
				if errors.Is(err, ErrTimeout) {
					ended.Add(1)
				}
			}
		}()
	}
	f.Bombed, f.Checks, err = p50(func() bool { return bombs.Load() >= 4 })
	close(stop)
	bob.Wait()
	f.Bombs, f.TimedOut = int(bombs.Load()), int(ended.Load())
	return f, err
}
