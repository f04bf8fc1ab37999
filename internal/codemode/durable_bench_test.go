package codemode

import (
	"context"
	"testing"
	"time"

	"github.com/isogate/isogate/internal/resultstore"
	"github.com/isogate/isogate/internal/resultstore/redistest"
)

// hundredCalls is a program of 100 sequential tool calls.
const hundredCalls = `let s = 0; for (let i = 0; i < 100; i++) s += (await counter.bump({i})).n; return s`

// BenchmarkDurable100Calls measures journalling (sandbox.durable) on a
// 100-call program: "off" runs it without a journal; "paused" journals in
// memory only (sandbox.durable: paused, a run that never pauses);
// "all-memory" and "all-redis" write the journal through to the store
// after every call; "replay" resumes the whole run from its journal (no
// call reaches the backend). Per host call: ns/op ÷ 100.
func BenchmarkDurable100Calls(b *testing.B) {
	e, _ := durableEngine(b)
	ctx := context.Background()
	run := func(b *testing.B, d func() *DurableRun) {
		for b.Loop() {
			var dr *DurableRun
			if d != nil {
				dr = d()
			}
			if r := e.Execute(ctx, Request{Code: hundredCalls, Durable: dr}); r.IsError {
				b.Fatal(r.Text)
			}
		}
	}
	limits := DurableLimits{MaxCalls: 1000, MaxBytes: 4 << 20}
	b.Run("off", func(b *testing.B) { run(b, nil) })
	b.Run("paused", func(b *testing.B) {
		run(b, func() *DurableRun { return NewDurableRun(NewJournal(hundredCalls, 0, 0, ""), limits, nil) })
	})
	sinkTo := func(j resultstore.Journals) func() *DurableRun {
		return func() *DurableRun {
			_ = j.DeleteJournal(context.Background(), "bench", "holder") // each run on a fresh journal
			var at resultstore.JournalCursor
			sink := func(ctx context.Context, entries [][]byte) error {
				next, err := j.AppendJournal(ctx, "owner", "bench", "holder", "", at, entries, time.Minute)
				at = next
				return err
			}
			return NewDurableRun(NewJournal(hundredCalls, 0, 0, ""), limits, sink)
		}
	}
	mem := resultstore.NewMemoryJournals(64<<20, []byte("bench-key"))
	b.Run("all-memory", func(b *testing.B) {
		run(b, sinkTo(mem))
	})
	b.Run("all-redis", func(b *testing.B) {
		srv, err := redistest.Start()
		if err != nil {
			b.Skip(err)
		}
		defer srv.Stop()
		rj, err := resultstore.NewRedisJournals(resultstore.RedisOptions{URL: srv.URL(), HMACKey: []byte("bench-key")}, 4<<20)
		if err != nil {
			b.Fatal(err)
		}
		defer rj.Close()
		run(b, sinkTo(rj))
	})
	full := NewDurableRun(NewJournal(hundredCalls, 0, 0, ""), limits, nil)
	if r := e.Execute(ctx, Request{Code: hundredCalls, Durable: full}); r.IsError {
		b.Fatal(r.Text)
	}
	journal, _ := journalEntries(full)
	b.Run("replay", func(b *testing.B) {
		run(b, func() *DurableRun {
			j, _ := ParseJournal(journal)
			return NewDurableRun(j, limits, nil)
		})
	})
}
