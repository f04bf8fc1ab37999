package bench

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/isogate/isogate/config"
	"github.com/isogate/isogate/internal/codemode"
)

// BenchmarkTier3OneCall measures issue 38's engine rows through the real
// gateway engine in each isolation mode, the contenders taking turns in
// every iteration (after SampleGap at rest each) so that they share the
// machine's state: the direct call of `big.small` on the backend manager
// (the floor), the pool's own trivial run (the report's v8-pool, v8-proc
// in process mode), a trivial tier-3 run, and one tool call through tier
// 3. It reports each one's p50, trivial ÷ pool and one minus direct.
//
//	go test -run '^$' -bench Tier3OneCall -benchtime 300x ./bench/
func BenchmarkTier3OneCall(b *testing.B) {
	defer quietDefaultLogger()()
	for _, mode := range []config.Isolation{config.IsolationThread, config.IsolationProcess} {
		b.Run(string(mode), func(b *testing.B) {
			ctx := context.Background()
			g, err := benchGateway(ctx, mode, bigBackend())
			if err != nil {
				b.Fatal(err)
			}
			defer g.Close()
			pool := NewV8Pool(8) // the report's v8-pool, or v8-proc in process mode
			if mode == config.IsolationProcess {
				if pool, err = NewV8Proc(8, nil); err != nil {
					b.Fatal(err)
				}
			}
			defer pool.Close()
			trivial := WorkloadByName(WorkloadTrivial)
			run := func(code, want string) func() error {
				return func() error {
					if r := g.Engine.Execute(ctx, codemode.Request{Code: code}); r.IsError || r.Text != want {
						return fmt.Errorf("%s: %.200s", code, r.Text)
					}
					return nil
				}
			}
			contenders := []struct {
				name string
				f    func() error
			}{
				{"direct", func() error {
					_, err := g.Backends.Call(ctx, "big", &mcp.CallToolParams{Name: "small", Arguments: map[string]any{}})
					return err
				}},
				{"pool", func() error {
					_, err := pool.Run(ctx, trivial)
					return err
				}},
				{"trivial", run("const x = 1;\nreturn x", "1")},
				{"one", run("const r = await big.small({});\nreturn r.ok", "true")},
			}
			samples := make([][]time.Duration, len(contenders))
			for range 5 { // warm: worker contexts, the backend's session
				for _, c := range contenders {
					if err := c.f(); err != nil {
						b.Fatal(err)
					}
				}
			}
			for b.Loop() {
				for i, c := range contenders {
					b.StopTimer()
					time.Sleep(SampleGap)
					b.StartTimer()
					start := time.Now()
					if err := c.f(); err != nil {
						b.Fatal(err)
					}
					samples[i] = append(samples[i], time.Since(start))
				}
			}
			p50 := make([]time.Duration, len(contenders))
			for i, c := range contenders {
				slices.Sort(samples[i])
				p50[i] = samples[i][len(samples[i])/2]
				b.ReportMetric(float64(p50[i].Nanoseconds())/1e3, c.name+"-µs")
			}
			b.ReportMetric(float64(p50[2])/float64(p50[1]), "trivial/pool")
			b.ReportMetric(float64((p50[3]-p50[0]).Nanoseconds())/1e3, "one-minus-direct-µs")
		})
	}
}
