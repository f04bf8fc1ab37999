package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/isogate/isogate/internal/catalog"
	"github.com/isogate/isogate/internal/codemode"
	"github.com/isogate/isogate/internal/codemode/output"
	"github.com/isogate/isogate/internal/typecheck"
	"github.com/isogate/isogate/v8sandbox"
)

func init() {
	RegisterSection(Section{Title: "Type check before the run (issue 36)", Name: "typecheck", Order: 14, Run: typecheckSection})
}

// checkedBackends × checkedTools are the tools programs are checked
// against (100, as in issue 36's goal).
const checkedBackends, checkedTools = 10, 10

// checkedCatalogue is the same 100 tools as a catalogue, with input and
// output schemas.
func checkedCatalogue() *catalog.Catalog {
	cat := catalog.New()
	in := map[string]any{"type": "object", "required": []any{"id"}, "properties": map[string]any{
		"id": map[string]any{"type": "string"}, "limit": map[string]any{"type": "number"},
		"tags": map[string]any{"type": "array", "items": map[string]any{"type": "string"}}}}
	out := map[string]any{"type": "object", "required": []any{"items"}, "properties": map[string]any{
		"items": map[string]any{"type": "array", "items": map[string]any{"type": "object", "required": []any{"id", "n"},
			"properties": map[string]any{"id": map[string]any{"type": "string"}, "n": map[string]any{"type": "number"}}}}}}
	for i := range checkedBackends {
		var tools []*mcp.Tool
		for j := range checkedTools {
			tools = append(tools, &mcp.Tool{Name: fmt.Sprint("tool", j), Description: "A tool.", InputSchema: in, OutputSchema: out})
		}
		cat.SetBackend(fmt.Sprint("b", i), nil, tools)
	}
	return cat
}

// itemsCaller answers every call with one item {id: "a", n: 1}.
type itemsCaller struct{}

func (itemsCaller) CallTool(context.Context, string, string, json.RawMessage) (*mcp.CallToolResult, error) {
	return &mcp.CallToolResult{StructuredContent: map[string]any{"items": []any{map[string]any{"id": "a", "n": 1}}}}, nil
}

// Issue 36's speed goals.
var (
	goalWarmCheck = goal{bound: float64(10 * time.Millisecond)}
	goalColdCheck = goal{bound: float64(500 * time.Millisecond)}
	goalHeapMB    = goal{bound: 80}
)

// typecheckSection measures the checker (warm check, cold first check,
// heap) against issue 36's goals, and the 40-line program run through
// Engine.Execute unchecked and with sandbox.typecheck: warn, side by side.
func typecheckSection(ctx context.Context, cfg ReportConfig) (string, error) {
	rounds, perRound, cold, warmup, jitWarmUp, firstChecks := 4, 25, 3, 3, 300, 100
	switch {
	case cfg.Smoke:
		rounds, perRound, cold, warmup, jitWarmUp, firstChecks = 1, 2, 1, 1, 1, 2
	case cfg.Quick:
		rounds, perRound, cold, jitWarmUp, firstChecks = 2, 10, 2, 100, 30
	}
	prog, decls := typecheck.BenchProgram(), typecheck.BenchDeclarations()

	pool := v8sandbox.NewPool(v8sandbox.Options{Workers: 1, Logger: quietLogger})
	defer pool.Close()
	cat := codemode.FromCatalog(checkedCatalogue())
	engine := func(mode string, c *typecheck.Checker) (*codemode.Engine, error) {
		return codemode.New(codemode.Options{Runner: pool, Catalog: cat, Caller: itemsCaller{}, Output: output.DefaultOptions(),
			Logger: quietLogger, Typecheck: c, TypecheckMode: mode, TypecheckTimeout: time.Minute})
	}
	off, err := engine(codemode.TypecheckOff, nil)
	if err != nil {
		return "", err
	}
	// The pool runs once before any checker exists: V8 runs on a pool
	// whose first run comes after a checker's check fail (INTERNAL,
	// "describing the error"), reported to the type-check work.
	if r := off.Execute(ctx, codemode.Request{Code: prog}); r.IsError {
		return "", fmt.Errorf("unchecked run: %s", truncate(r.Text, 200))
	}

	// Cold: a new checker's first check (compiler load, libraries, check),
	// and of it the check after the load (what the first check after start
	// costs once the compiler has loaded in the background): the
	// declarations parsed, their shared program made, the check. Each
	// round has a first-ever start (an empty cache directory: V8 compiles
	// the compiler from source, and the checker stores its code cache)
	// and a start with the code cache the first one stored.
	var colds, coldsNoCache, firsts []time.Duration
	var cacheStats typecheck.CodeCacheStats
	coldCheck := func(dir string) (total, first time.Duration, err error) {
		t0 := time.Now()
		c := typecheck.New(typecheck.Options{Timeout: time.Minute, CacheDir: dir})
		defer func() {
			s := c.CodeCacheStats()
			cacheStats.Loaded += s.Loaded
			cacheStats.Stored += s.Stored
			cacheStats.Rejected += s.Rejected
			cacheStats.Invalid += s.Invalid
			c.Close()
		}()
		err = c.Warm(ctx)
		t1 := time.Now()
		if err == nil {
			_, err = c.Check(ctx, decls, prog, false)
		}
		return time.Since(t0), time.Since(t1), err
	}
	for range cold {
		dir, err := os.MkdirTemp("", "isogate-bench-tc-*")
		if err != nil {
			return "", err
		}
		total, _, err := coldCheck(dir)
		if err == nil {
			coldsNoCache = append(coldsNoCache, total)
			var first time.Duration
			total, first, err = coldCheck(dir)
			colds = append(colds, total)
			firsts = append(firsts, first)
		}
		os.RemoveAll(dir)
		if err != nil {
			return "", fmt.Errorf("cold check: %w", err)
		}
	}
	if cacheStats.Stored != int64(cold) || cacheStats.Loaded != int64(cold) {
		return "", fmt.Errorf("cold checks: code cache %+v, want %d stored and %d loaded", cacheStats, cold, cold)
	}

	// A new checker's first checks, one after the load: V8 has not yet
	// optimized the compiler's hot functions.
	var first []time.Duration
	{
		c := typecheck.New(typecheck.Options{Timeout: time.Minute})
		err := c.Warm(ctx)
		for range firstChecks {
			if err != nil {
				break
			}
			if err = pause(ctx, SampleGap); err == nil {
				t0 := time.Now()
				_, err = c.Check(ctx, decls, prog, false)
				first = append(first, time.Since(t0))
			}
		}
		c.Close()
		if err != nil {
			return "", fmt.Errorf("first checks: %w", err)
		}
	}

	checker := typecheck.New(typecheck.Options{Timeout: time.Minute})
	defer checker.Close()
	if rep, err := checker.Check(ctx, decls, prog, false); err != nil || len(rep.Diagnostics) > 0 {
		return "", fmt.Errorf("the program does not check clean: %v %+v", err, rep)
	}
	// Warm means warm: the measured checkers first check jitWarmUp other
	// programs of the same size (typecheck.BenchWarmUpProgram), as a
	// gateway's long-lived checker has by then.
	for i := range jitWarmUp {
		if rep, err := checker.Check(ctx, decls, typecheck.BenchWarmUpProgram(i), false); err != nil || len(rep.Diagnostics) > 0 {
			return "", fmt.Errorf("warm-up program %d does not check clean: %v %+v", i, err, rep)
		}
	}

	// The engine's checker is its own: a checker keeps the declarations
	// of one catalogue parsed, and the engine's (generated from the
	// catalogue) differ in text from decls.
	engineChecker := typecheck.New(typecheck.Options{Timeout: time.Minute})
	defer engineChecker.Close()
	if err := engineChecker.Warm(ctx); err != nil {
		return "", fmt.Errorf("warming the engine's checker: %w", err)
	}
	warn, err := engine(codemode.TypecheckWarn, engineChecker)
	if err != nil {
		return "", err
	}
	for i := range jitWarmUp {
		if r := warn.Execute(ctx, codemode.Request{Code: typecheck.BenchWarmUpProgram(i)}); r.IsError || len(r.Notices) > 0 {
			return "", fmt.Errorf("warm-up program %d: %s %v", i, truncate(r.Text, 200), r.Notices)
		}
	}
	type contender struct {
		name string
		run  func() error
	}
	execute := func(name string, e *codemode.Engine) func() error {
		return func() error {
			r := e.Execute(ctx, codemode.Request{Code: prog})
			if r.IsError || !strings.Contains(r.Text, `13`) {
				return fmt.Errorf("%s: %s", name, truncate(r.Text, 200))
			}
			for _, n := range r.Notices {
				if strings.HasPrefix(n, "typecheck") {
					return fmt.Errorf("%s: %s", name, n)
				}
			}
			return nil
		}
	}
	contenders := []contender{
		{"run unchecked (`sandbox.typecheck: off`)", execute("off", off)},
		{"run checked first (`sandbox.typecheck: warn`)", execute("warn", warn)},
		{"warm check alone (`Checker.Check`)", func() error {
			_, err := checker.Check(ctx, decls, prog, false)
			return err
		}},
	}
	runs := make([]func() error, len(contenders))
	for i, c := range contenders {
		runs[i] = c.run
	}
	samples, err := sampleInTurns(ctx, runs, warmup, rounds, perRound)
	if err != nil {
		return "", err
	}
	heap, err := checker.HeapUsed(ctx)
	if err != nil {
		return "", fmt.Errorf("checker heap: %w", err)
	}
	heapMB := float64(heap) / (1 << 20)

	var b strings.Builder
	fmt.Fprintf(&b, "A 40-line program calling 13 of 100 tools (10 backends × 10 tools with input and output schemas, answered at once in this process), through `Engine.Execute` on a one-isolate thread pool, unchecked and type-checked first, and the checker's own check of it against the 100 tools' declarations; the three take turns in %d rounds of %d (%s apart). The engine's checker and the one checking alone are two (each keeps its declarations parsed); each first checked %d other programs of the same size (V8 optimizes the compiler's hot functions only after a few hundred checks: a new checker's first checks are in the last table).\n\n", rounds, perRound, SampleGap, jitWarmUp)
	b.WriteString("| | p50 | p99 | ÷ unchecked run |\n|---|---:|---:|---:|\n")
	base := Percentile(sorted(samples[0]), 50)
	for i, c := range contenders {
		s := sorted(samples[i])
		p50 := Percentile(s, 50)
		fmt.Fprintf(&b, "| %s | %s ms | %s ms | %s |\n", c.name, ms(p50), ms(Percentile(s, 99)), times(float64(p50)/float64(base)))
	}
	warmP50 := Percentile(sorted(samples[2]), 50)
	coldP50 := median(colds)
	b.WriteString("\nIssue 36's goals:\n\n")
	b.WriteString("| figure | this run | goal | met |\n|---|---:|---:|:---:|\n")
	for _, row := range []struct {
		name string
		v    float64
		u    unit
		g    goal
	}{
		{"warm check of the 40-line program against 100 tools' declarations (p50)", float64(warmP50), millis, goalWarmCheck},
		{fmt.Sprintf("cold first check: a new checker loads the compiler (from V8's code cache a first start stored) and the libraries, then checks (median of %d)", len(colds)), float64(coldP50), millis, goalColdCheck},
		{"checker heap after the warm checks (V8 used heap)", heapMB, megabytes, goalHeapMB},
	} {
		met := "**no**"
		if row.g.met(row.v) {
			met = "yes"
		}
		fmt.Fprintf(&b, "| %s | **%s** | %s | %s |\n", row.name, row.u(row.v), row.g.format(row.u), met)
	}
	fmt.Fprintf(&b, "| cold first check of a first-ever start: no code cache yet (the compiler compiled from source, the cache made and stored; median of %d) | %s | | |\n", len(coldsNoCache), millis(float64(median(coldsNoCache))))
	fmt.Fprintf(&b, "| a new checker's first %d checks of the program after its load (%s apart), before V8 has optimized the compiler (p50) | %s | | |\n", len(first), SampleGap, millis(float64(Percentile(sorted(first), 50))))
	fmt.Fprintf(&b, "| of the cold check, the check once the compiler has loaded (the 100 tools' declarations parsed, their shared program made, the check; median of %d) | %s | | |\n", len(firsts), millis(float64(median(firsts))))
	b.WriteString("\nThe checked run pays the warm check on the checker's one isolate before the program starts; the default (`sandbox.typecheck: off`) pays nothing. A cold check happens once per process (the compiler loads in the background at start); the goal row is a start with the code cache, which every start but a machine's first with this binary is: the first start stores V8's code cache of the compiler (made once the libraries are parsed and a first check made, so it holds what a check runs) in `server.cache_dir`/typecheck, and later starts compile the compiler from it; declarations are parsed once per catalogue version, and a clean program is checked in the shared program of its declarations, whose checker keeps the libraries' types (a program the compiler finds anything in is checked again in a program of its own: its diagnostics are a fresh checker's).\n")
	return b.String(), nil
}
