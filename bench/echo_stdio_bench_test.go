package bench

import (
	"cmp"
	"context"
	"os"
	"os/exec"
	"slices"
	"testing"
	"time"
)

// BenchmarkEchoStdio measures one `echo` of server-everything over stdio,
// interleaved in every round: made directly by a go-sdk client, through
// `isogate serve` (process isolation, server.expose both) as a
// passthrough tool, and through call_tool_chain in tier 2 and tier 3. It
// reports each path's p50 and the ratios the issue-38 goals name
// (passthrough minus direct, tier 3 ÷ direct). Set ISOGATE_BENCH_ISOLATION
// to thread for the thread mode.
//
//	go test -run '^$' -bench EchoStdio -benchtime 300x ./
func BenchmarkEchoStdio(b *testing.B) {
	if testing.Short() {
		b.Skip("starts isogate and server-everything")
	}
	root, err := moduleRoot()
	if err != nil {
		b.Fatal(err)
	}
	everything, err := serverEverything(root)
	if err != nil {
		b.Skip(err)
	}
	ctx := context.Background()
	dir := b.TempDir()
	bin := os.Getenv("ISOGATE_BENCH_BIN") // a prebuilt isogate (e.g. an older build to compare; it is started with server.expose: both)
	if bin == "" {
		if bin, err = buildIsogate(ctx, root, dir); err != nil {
			b.Fatal(err)
		}
	}
	mode := cmp.Or(os.Getenv("ISOGATE_BENCH_ISOLATION"), "process")
	direct, err := connectStdio(ctx, exec.Command("node", everything, "stdio"))
	if err != nil {
		b.Fatal(err)
	}
	defer direct.Close()
	gw, err := startIsogate(ctx, bin, dir, everything, mode)
	if err != nil {
		b.Fatal(err)
	}
	defer gw.Close()
	passthrough, err := passthroughEcho(ctx, gw)
	if err != nil {
		b.Fatal(err)
	}
	paths := []struct {
		name string
		f    func() error
	}{
		{"direct", toolCall(ctx, direct, "echo", map[string]any{"message": "x"})},
		{"passthrough", toolCall(ctx, gw, passthrough, map[string]any{"message": "x"})},
		{"tier2", toolCall(ctx, gw, "call_tool_chain", map[string]any{"code": `return await everything.echo({message: "x"})`})},
		{"tier3", toolCall(ctx, gw, "call_tool_chain", map[string]any{"code": `const r = await everything.echo({message: "x"}); return r.length`})},
	}
	for range 20 { // warm: backend start, transform cache, worker contexts
		for _, p := range paths {
			if err := p.f(); err != nil {
				b.Fatal(err)
			}
		}
	}
	samples := make([][]time.Duration, len(paths))
	b.ResetTimer()
	for b.Loop() {
		for i, p := range paths {
			b.StopTimer()
			time.Sleep(SampleGap)
			b.StartTimer()
			start := time.Now()
			if err := p.f(); err != nil {
				b.Fatal(err)
			}
			samples[i] = append(samples[i], time.Since(start))
		}
	}
	p50 := make([]time.Duration, len(paths))
	for i, s := range samples {
		slices.Sort(s)
		p50[i] = s[len(s)/2]
		b.ReportMetric(float64(p50[i].Microseconds()), paths[i].name+"-p50-µs")
	}
	b.ReportMetric(float64((p50[1] - p50[0]).Microseconds()), "passthrough-minus-direct-µs")
	b.ReportMetric(float64(p50[3])/float64(p50[0]), "tier3÷direct")
}
