package bench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/isogate/isogate/internal/catalog"
	"github.com/isogate/isogate/internal/codemode"
	"github.com/isogate/isogate/internal/codemode/output"
	"github.com/isogate/isogate/internal/resultstore"
	"github.com/isogate/isogate/internal/resultstore/redistest"
	"github.com/isogate/isogate/v8sandbox"
)

func init() {
	RegisterSection(Section{Title: "Durable runs: journaling per host call (issue 35)", Name: "durable", Order: 13, Run: durableSection})
}

// durableCalls is the number of host calls of the durable program.
const durableCalls = 100

// durableProgram makes durableCalls sequential tool calls.
var durableProgram = fmt.Sprintf(`let s = 0; for (let i = 0; i < %d; i++) s += (await counter.bump({i})).n; return s`, durableCalls)

// bumpCaller answers every call with {"n": 1} and counts the calls that
// reach it.
type bumpCaller struct{ calls atomic.Int64 }

func (c *bumpCaller) CallTool(context.Context, string, string, json.RawMessage) (*mcp.CallToolResult, error) {
	c.calls.Add(1)
	return &mcp.CallToolResult{StructuredContent: map[string]any{"n": 1}}, nil
}

// durableContender is one way of running the program: a fresh
// DurableRun per run (nil: durability off).
type durableContender struct {
	name, what string
	run        func() *codemode.DurableRun
	// replay: no call may reach the backend.
	replay bool
}

// durableSection measures the 100-call program with sandbox.durable off,
// paused (journal in memory only), all (journal written through to the
// memory store and to Redis after every call), and a resume by replay of
// the whole journal, side by side on one engine.
func durableSection(ctx context.Context, cfg ReportConfig) (string, error) {
	rounds, perRound, warmup := 4, 40, 3
	switch {
	case cfg.Smoke:
		rounds, perRound, warmup = 1, 2, 1
	case cfg.Quick:
		rounds, perRound = 2, 15
	}
	cat := catalog.New()
	cat.SetBackend("counter", nil, []*mcp.Tool{{Name: "bump", InputSchema: map[string]any{"type": "object"}}})
	pool := v8sandbox.NewPool(v8sandbox.Options{Workers: 1, Logger: quietLogger})
	defer pool.Close()
	caller := &bumpCaller{}
	e, err := codemode.New(codemode.Options{Runner: pool, Catalog: codemode.FromCatalog(cat), Caller: caller, Durable: true,
		Output: output.DefaultOptions(), Logger: quietLogger})
	if err != nil {
		return "", err
	}
	limits := codemode.DurableLimits{MaxCalls: 1000, MaxBytes: 4 << 20}
	fresh := func(sink codemode.JournalSink) func() *codemode.DurableRun {
		return func() *codemode.DurableRun {
			return codemode.NewDurableRun(codemode.NewJournal(durableProgram, 0, 0, ""), limits, sink)
		}
	}
	// A run appends its journal entries to the store as it goes (each run
	// starts on a fresh journal: the last run's is dropped first).
	sinkTo := func(j resultstore.Journals) func() *codemode.DurableRun {
		return func() *codemode.DurableRun {
			_ = j.DeleteJournal(ctx, "bench", "holder")
			var at resultstore.JournalCursor
			return fresh(func(ctx context.Context, entries [][]byte) error {
				next, err := j.AppendJournal(ctx, "owner", "bench", "holder", "", at, entries, time.Minute)
				at = next
				return err
			})()
		}
	}
	contenders := []durableContender{
		{name: "off", what: "no journal (`sandbox.durable: off`)"},
		{name: "paused", what: "journal kept in memory, saved only at a pause (`paused`, a run that never pauses)", run: fresh(nil)},
		{name: "all, memory store", what: "journal entries appended to the memory store at every call (`all`, one replica)",
			run: sinkTo(resultstore.NewMemoryJournals(64<<20, []byte("bench-key")))},
	}
	redisNote := ""
	srv, err := redistest.Start()
	switch {
	case errors.Is(err, redistest.ErrNoRedis):
		redisNote = "The Redis row was not measured: redis-server is not installed here (" + err.Error() + ")."
	case err != nil:
		redisNote = "The Redis row was not measured: " + err.Error()
	default:
		defer srv.Stop()
		rj, err := resultstore.NewRedisJournals(resultstore.RedisOptions{URL: srv.URL(), HMACKey: []byte("bench-key")}, 4<<20)
		if err != nil {
			return "", fmt.Errorf("redis journals: %w", err)
		}
		defer rj.Close()
		contenders = append(contenders, durableContender{name: "all, Redis", what: "journal entries appended to a local redis-server at every call (`all`, replicas sharing Redis)", run: sinkTo(rj)})
		redisNote = "Redis is a redis-server started for this section on loopback, without persistence."
	}
	// The journal of one whole run, to resume from.
	whole := fresh(nil)()
	if r := e.Execute(ctx, codemode.Request{Code: durableProgram, Durable: whole}); r.IsError {
		return "", fmt.Errorf("journalled run: %s", r.Text)
	}
	var journal [][]byte
	if err := whole.Flush(ctx, func(_ context.Context, entries [][]byte) error { journal = entries; return nil }); err != nil {
		return "", fmt.Errorf("journalled run: %w", err)
	}
	contenders = append(contenders, durableContender{name: "resume by replay", replay: true,
		what: "the whole journal replayed in a fresh context (no call reaches the backend)",
		run: func() *codemode.DurableRun {
			j, _ := codemode.ParseJournal(journal)
			return codemode.NewDurableRun(j, limits, nil)
		}})

	once := func(c durableContender) error {
		var d *codemode.DurableRun
		if c.run != nil {
			d = c.run()
		}
		before := caller.calls.Load()
		r := e.Execute(ctx, codemode.Request{Code: durableProgram, Durable: d})
		if r.IsError || r.Text != fmt.Sprint(durableCalls) {
			return fmt.Errorf("%s: %s", c.name, truncate(r.Text, 200))
		}
		if made := caller.calls.Load() - before; c.replay && made != 0 || !c.replay && made != durableCalls {
			return fmt.Errorf("%s: %d calls reached the backend", c.name, made)
		}
		return nil
	}
	runs := make([]func() error, len(contenders))
	for i, c := range contenders {
		runs[i] = func() error { return once(c) }
	}
	samples, err := sampleInTurns(ctx, runs, warmup, rounds, perRound)
	if err != nil {
		return "", err
	}

	var b strings.Builder
	fmt.Fprintf(&b, "A program of %d sequential tool calls (`counter.bump`, answered at once in this process) through `Engine.Execute` on a one-isolate thread pool, with each `sandbox.durable` setting; the contenders take turns in %d rounds of %d runs (%s apart). The journal holds each call's arguments and result. Per call = (p50 − off's p50) ÷ %d.\n\n",
		durableCalls, rounds, perRound, SampleGap, durableCalls)
	b.WriteString("| run | p50 | p99 | ÷ off | journaling per host call |\n|---|---:|---:|---:|---:|\n")
	off := Percentile(sorted(samples[0]), 50)
	for i, c := range contenders {
		s := sorted(samples[i])
		p50 := Percentile(s, 50)
		perCallCell := "—"
		if i > 0 {
			perCallCell = fmt.Sprintf("%+.1f µs", float64(p50-off)/float64(time.Microsecond)/durableCalls)
		}
		fmt.Fprintf(&b, "| %s: %s | %s ms | %s ms | %s | %s |\n", c.name, c.what, ms(p50), ms(Percentile(s, 99)), times(float64(p50)/float64(off)), perCallCell)
	}
	size := 0
	for _, e := range journal {
		size += len(e)
	}
	fmt.Fprintf(&b, "\nThe journal of the whole run is %d entries, %d bytes (unsealed), appended to the store as the run goes: each entry is written once. %s\n", len(journal), size, redisNote)
	return b.String(), nil
}

// sorted returns a sorted copy of samples.
func sorted(samples []time.Duration) []time.Duration {
	s := slices.Clone(samples)
	slices.Sort(s)
	return s
}
