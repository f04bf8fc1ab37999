package codemode

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/isogate/isogate/internal/authn"
	"github.com/isogate/isogate/internal/kv"
	"github.com/isogate/isogate/internal/resultstore/redistest"
	"github.com/isogate/isogate/internal/state"
)

// BenchmarkState100Calls puts 100 sequential state calls (50 set, 50 get)
// beside 100 tool calls of an in-process backend, in one run of the
// benchmark: "tool" is hundredCalls; "state-memory", "state-bolt" (a real
// bbolt file, each write synced) and "state-redis" (a real redis-server)
// the same loop over state. Per call: ns/op ÷ 100.
func BenchmarkState100Calls(b *testing.B) {
	e, _ := durableEngine(b)
	ctx := authn.WithPrincipal(context.Background(), &authn.Principal{Name: "bench"})
	const stateCalls = `let s = 0; for (let i = 0; i < 50; i++) { await state.set("k" + (i % 10), i); s += await state.get("k" + (i % 10)); } return s`
	run := func(b *testing.B, code string) {
		for b.Loop() {
			if r := e.Execute(ctx, Request{Code: code}); r.IsError {
				b.Fatal(r.Text)
			}
		}
	}
	with := func(b *testing.B, s kv.Store) {
		st, err := state.New(state.Options{Store: s})
		if err != nil {
			b.Fatal(err)
		}
		e.opts.State = st
		run(b, stateCalls)
	}
	b.Run("tool", func(b *testing.B) { run(b, hundredCalls) })
	b.Run("state-memory", func(b *testing.B) { with(b, kv.NewMemory()) })
	b.Run("state-bolt", func(b *testing.B) {
		s, err := kv.OpenBolt(kv.BoltOptions{Dir: b.TempDir()})
		if err != nil {
			b.Fatal(err)
		}
		defer s.Close()
		with(b, s)
	})
	b.Run("state-redis", func(b *testing.B) {
		srv, err := redistest.Start()
		if err != nil {
			b.Skip(err)
		}
		defer srv.Stop()
		s, err := kv.NewRedis(kv.RedisOptions{URL: srv.URL(), Prefix: fmt.Sprintf("{bench-%d}:", time.Now().UnixNano())})
		if err != nil {
			b.Fatal(err)
		}
		defer s.Close()
		with(b, s)
	})
}
