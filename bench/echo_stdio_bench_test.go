package bench

import (
	"cmp"
	"context"
	"os"
	"os/exec"
	"slices"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// BenchmarkEchoStdio measures one `echo` of server-everything over stdio,
// interleaved in every round: made directly by a go-sdk client, through
// `isogate serve` (process isolation, server.expose both) as a
// passthrough tool, and through call_tool_chain in tier 2 and tier 3. It
// reports each path's p50 and the ratios the issue-38 and issue-44 goals
// name (passthrough minus direct, tier 3 ÷ direct). Set
// ISOGATE_BENCH_ISOLATION to thread for the thread mode.
//
//	go test -run '^$' -bench 'EchoStdio$' -benchtime 300x ./
func BenchmarkEchoStdio(b *testing.B) { benchEchoStdio(b, false) }

// BenchmarkEchoStdioFloors is BenchmarkEchoStdio with the floors a Go
// gateway stands on sampled in the same rounds (cmd/sdkproxy): a byte
// relay (the two extra process hops alone, nothing parsed), the bare go-sdk
// proxy (the SDK's server and client with its own stdio transports and
// nothing else) and the lean proxy (the same with isogate's stdio
// connections, as `isogate serve` has). It reports each floor minus direct,
// passthrough minus the lean proxy (what isogate's own work adds over the
// SDK's) and tier 3 ÷ the lean proxy. Its five extra processes make every
// path slower than in BenchmarkEchoStdio (each process's caches are colder
// when its turn comes): compare within one run only.
//
//	go test -run '^$' -bench EchoStdioFloors -benchtime 300x ./
func BenchmarkEchoStdioFloors(b *testing.B) { benchEchoStdio(b, true) }

// echoPath is one way of making the echo call.
type echoPath struct {
	name string
	f    func() error
}

// benchEchoStdio samples the echo paths, SampleGap apart, each round in
// the same order, and reports their p50s and the goals' figures.
func benchEchoStdio(b *testing.B, floors bool) {
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
		if bin, err = buildIsogate(ctx, root); err != nil {
			b.Fatal(err)
		}
	}
	mode := cmp.Or(os.Getenv("ISOGATE_BENCH_ISOLATION"), "process")
	echo := map[string]any{"message": "x"}
	connect := func(cmd *exec.Cmd) *mcp.ClientSession {
		cs, err := connectStdio(ctx, cmd)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { cs.Close() })
		return cs
	}
	paths := []echoPath{{"direct", toolCall(ctx, connect(exec.Command("node", everything, "stdio")), "echo", echo)}}
	if floors {
		proxy, err := buildSDKProxy(ctx, dir)
		if err != nil {
			b.Fatal(err)
		}
		for _, floor := range []struct{ name, flag string }{{"relay", "-relay"}, {"leanproxy", "-lean"}, {"proxy", ""}} {
			args := []string{"node", everything, "stdio"}
			if floor.flag != "" {
				args = append([]string{floor.flag}, args...)
			}
			paths = append(paths, echoPath{floor.name, toolCall(ctx, connect(exec.Command(proxy, args...)), "echo", echo)})
		}
	}
	gw, err := startIsogate(ctx, bin, dir, everything, mode)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { gw.Close() })
	passthrough, err := passthroughEcho(ctx, gw)
	if err != nil {
		b.Fatal(err)
	}
	paths = append(paths,
		echoPath{"passthrough", toolCall(ctx, gw, passthrough, echo)},
		echoPath{"tier2", toolCall(ctx, gw, "call_tool_chain", map[string]any{"code": `return await everything.echo({message: "x"})`})},
		echoPath{"tier3", toolCall(ctx, gw, "call_tool_chain", map[string]any{"code": `const r = await everything.echo({message: "x"}); return r.length`})},
	)
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
	p50 := map[string]time.Duration{}
	for i, s := range samples {
		slices.Sort(s)
		p50[paths[i].name] = s[len(s)/2]
		b.ReportMetric(float64(p50[paths[i].name].Microseconds()), paths[i].name+"-p50-µs")
	}
	minus := func(a, b string) float64 { return float64((p50[a] - p50[b]).Microseconds()) }
	b.ReportMetric(minus("passthrough", "direct"), "passthrough-minus-direct-µs")
	b.ReportMetric(float64(p50["tier3"])/float64(p50["direct"]), "tier3÷direct")
	if floors {
		b.ReportMetric(minus("relay", "direct"), "relay-minus-direct-µs")
		b.ReportMetric(minus("proxy", "direct"), "proxy-minus-direct-µs")
		b.ReportMetric(minus("leanproxy", "direct"), "leanproxy-minus-direct-µs")
		b.ReportMetric(minus("passthrough", "leanproxy"), "passthrough-minus-leanproxy-µs")
		b.ReportMetric(float64(p50["tier3"])/float64(p50["leanproxy"]), "tier3÷leanproxy")
	}
}
