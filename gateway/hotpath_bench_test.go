package gateway

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"os"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/isogate/isogate/config"
	"github.com/isogate/isogate/internal/app"
	"github.com/isogate/isogate/internal/backend"
	"github.com/isogate/isogate/internal/jsonrpcio"
	"github.com/isogate/isogate/internal/pipeline"
)

// hotPathLayer is one layer of a passthrough call, each one the layer
// before it plus the stages named in stage.
type hotPathLayer struct {
	name  string // metric prefix
	stage string // what this layer adds to the one before it
	call  func() error
}

// BenchmarkHotPath attributes a passthrough call's cost to its stages, in
// one process: client, gateway and echo backend talk over OS pipes framed
// as isogate's stdio connections are (no process start, no Node: the
// gateway's own work and the pipes' wake-ups). Every iteration
// calls each layer once, in rotating order, so machine noise hits them
// alike; each layer is the one before it plus some stages:
//
//   - direct: a go-sdk client calling the echo server over two pipes,
//     framed as isogate frames stdio (jsonrpcio), with no gateway: the
//     floor, and the hop the gateway itself makes to its backend;
//   - manager: backend.Manager.Call (readiness, fair share, attribution,
//     the backend's client and its connection wrappers) around that hop;
//   - pipeline: the call pipeline (audit, policy, arguments, approval,
//     record, observe, input rounds, fence) around the manager;
//   - served: a go-sdk client calling the passthrough tool over pipes,
//     served as `isogate serve` serves stdio (the SDK's decoding and encoding, the
//     task boundary, the session guard and the other middlewares, the
//     passthrough handler) around the pipeline;
//   - http: the same call over streamable HTTP, a 2025-11-25 session;
//   - http-stateless: the same over a second gateway, alike but for
//     server.stateless (2026-07-28 clients, no protocol session).
//
// It reports each layer's p50 (µs), each stage's share (the p50 of a layer
// minus the p50 of the one before it) and each layer's allocations per
// call (a count that does not move with the machine's load: what the next
// feature's cost shows in first).
//
//	go test -run '^$' -bench HotPath -benchtime 3000x ./gateway/
func BenchmarkHotPath(b *testing.B) {
	ctx := context.Background()
	cfg := config.Default()
	cfg.Server.CacheDir = b.TempDir()
	cfg.Server.Expose = config.ExposePassthrough
	cfg.Sandbox.Isolation = config.IsolationThread
	g, err := build(cfg, app.Options{Runner: testPool(), Logger: slog.New(slog.DiscardHandler), ExtraSpecs: []backend.Spec{pipeBackend(b, "echo", echoServer())}})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { g.Close() })
	if err := g.Start(ctx); err != nil {
		b.Fatal(err)
	}
	wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := g.app.Backends.WaitHealthy(wctx); err != nil {
		b.Fatal(err)
	}

	// Over pipes, framed as isogate frames stdio on both ends (jsonrpcio):
	// the echo server alone, and the gateway served as `isogate serve` is.
	ect, est := pipeTransports(b)
	ess, err := echoServer().Connect(ctx, est, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { ess.Close() })
	direct := connectBench(b, ect, "")
	sctx, stop := context.WithCancel(ctx)
	gct, gst := pipeTransports(b)
	served := make(chan error, 1)
	go func() { served <- g.app.Surface.ServeTransport(sctx, gst) }()
	b.Cleanup(func() { stop(); <-served })
	stdio := connectBench(b, gct, "")
	waitForTool(b, ctx, stdio, "echo")

	srv := httptest.NewServer(g.HTTPHandler())
	b.Cleanup(srv.Close)
	session := connectBench(b, &mcp.StreamableClientTransport{Endpoint: srv.URL + "/mcp"}, "")
	// server.stateless: the same gateway without protocol sessions, its
	// clients on 2026-07-28 (every request carries its _meta).
	scfg := *cfg
	scfg.Server.Stateless = true
	scfg.Server.CacheDir = b.TempDir()
	sg, err := build(&scfg, app.Options{Runner: testPool(), Logger: slog.New(slog.DiscardHandler), ExtraSpecs: []backend.Spec{pipeBackend(b, "echo", echoServer())}})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { sg.Close() })
	if err := sg.Start(ctx); err != nil {
		b.Fatal(err)
	}
	if err := sg.app.Backends.WaitHealthy(wctx); err != nil {
		b.Fatal(err)
	}
	ssrv := httptest.NewServer(sg.HTTPHandler())
	b.Cleanup(ssrv.Close)
	stateless := connectBench(b, &mcp.StreamableClientTransport{Endpoint: ssrv.URL + "/mcp"}, "")
	waitForTool(b, ctx, stateless, "echo")
	for _, c := range []struct {
		cs   *mcp.ClientSession
		want string
	}{{session, "2025-11-25"}, {stateless, "2026-07-28"}} {
		if v := c.cs.InitializeResult().ProtocolVersion; v != c.want {
			b.Fatalf("protocol %s, want %s", v, c.want)
		}
	}

	args := json.RawMessage(`{"message":"hello"}`)
	viaClient := func(cs *mcp.ClientSession) func() error {
		return func() error {
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: args})
			return echoed(res, err)
		}
	}
	layers := []hotPathLayer{
		{"direct", "the echo server called over pipes, no gateway", viaClient(direct)},
		{"manager", "backend manager", func() error {
			return echoed(g.app.Backends.Call(ctx, "echo", &mcp.CallToolParams{Name: "echo", Arguments: args}))
		}},
		{"pipeline", "call pipeline", func() error {
			return echoed(g.app.Calls.Call(ctx, &pipeline.Call{Backend: "echo", Tool: "echo", Args: args}))
		}},
		{"served", "served as stdio over pipes: SDK decode/encode, task boundary, session guard, handler", viaClient(stdio)},
		{"http", "streamable HTTP, a 2025-11-25 session", viaClient(session)},
		{"http-stateless", "streamable HTTP, server.stateless (2026-07-28), another gateway alike", viaClient(stateless)},
	}
	if only := os.Getenv("ISOGATE_HOTPATH_LAYER"); only != "" { // profile one layer alone
		layers = slices.DeleteFunc(layers, func(l hotPathLayer) bool { return l.name != only })
		if len(layers) == 0 {
			b.Fatalf("ISOGATE_HOTPATH_LAYER=%s names no layer", only)
		}
	}
	for range 200 { // warm
		for _, l := range layers {
			if err := l.call(); err != nil {
				b.Fatalf("%s: %v", l.name, err)
			}
		}
	}
	allocs := make([]float64, len(layers))
	bytes := make([]float64, len(layers))
	for i, l := range layers {
		allocs[i], bytes[i] = allocsPerCall(b, 200, l.call)
	}
	samples := make([][]time.Duration, len(layers))
	b.ResetTimer()
	for i := range b.N {
		for j := range layers {
			l := layers[(i+j)%len(layers)]
			start := time.Now()
			if err := l.call(); err != nil {
				b.Fatalf("%s: %v", l.name, err)
			}
			samples[(i+j)%len(layers)] = append(samples[(i+j)%len(layers)], time.Since(start))
		}
	}
	b.StopTimer()
	us := func(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }
	p50 := make([]time.Duration, len(layers))
	for i, l := range layers {
		p50[i] = percentile(samples[i], 50)
		b.ReportMetric(us(p50[i]), l.name+"-µs")
		b.ReportMetric(allocs[i], l.name+"-allocs")
		b.ReportMetric(bytes[i], l.name+"-B")
	}
	// Each stage's share: a layer minus the one it wraps (direct is the
	// floor of the whole: served minus direct is what the gateway adds).
	base := map[string]string{"manager": "direct", "pipeline": "manager", "served": "pipeline", "http": "served", "http-stateless": "served"}
	if len(layers) > 1 {
		idx := map[string]int{}
		for i, l := range layers {
			idx[l.name] = i
		}
		for i, l := range layers {
			if from, ok := base[l.name]; ok {
				b.ReportMetric(us(p50[i]-p50[idx[from]]), "+"+l.name+"-µs")
				b.ReportMetric(allocs[i]-allocs[idx[from]], "+"+l.name+"-allocs")
			}
		}
		b.ReportMetric(us(p50[idx["served"]]-p50[idx["direct"]]), "served-minus-direct-µs")
		b.Logf("stages: %s", stageNames(layers))
	}
	b.ReportMetric(0, "ns/op") // an iteration is one call of each layer; the rows say more
}

// stageNames says what each layer adds, for the benchmark's log.
func stageNames(layers []hotPathLayer) string {
	s := ""
	for _, l := range layers {
		s += "\n  " + l.name + ": " + l.stage
	}
	return s
}

// echoed is nil when res is the echo backend's answer to "hello".
func echoed(res *mcp.CallToolResult, err error) error {
	if err != nil {
		return err
	}
	if res.IsError || len(res.Content) != 1 {
		return fmt.Errorf("echo result: %+v", res)
	}
	if tc, ok := res.Content[0].(*mcp.TextContent); !ok || tc.Text != "hello" {
		return fmt.Errorf("echo result content: %+v", res.Content[0])
	}
	return nil
}

// allocsPerCall is the mean number of heap allocations and bytes of the
// whole process per call of f, over n calls (the gateway's goroutines
// included: a call's work is spread over several).
func allocsPerCall(b *testing.B, n int, f func() error) (allocs, bytes float64) {
	b.Helper()
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for range n {
		if err := f(); err != nil {
			b.Fatal(err)
		}
	}
	runtime.ReadMemStats(&after)
	return float64(after.Mallocs-before.Mallocs) / float64(n), float64(after.TotalAlloc-before.TotalAlloc) / float64(n)
}

// pipeTransports returns the two ends of a connection over two OS pipes,
// each framed by jsonrpcio as isogate's own stdio connections are.
func pipeTransports(b *testing.B) (client, server mcp.Transport) {
	b.Helper()
	cr, sw, err := os.Pipe()
	if err != nil {
		b.Fatal(err)
	}
	sr, cw, err := os.Pipe()
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { cr.Close(); sw.Close(); sr.Close(); cw.Close() })
	end := func(r, w *os.File) mcp.Transport {
		return connTransport{jsonrpcio.NewConn(r, w, mcp.DefaultMaxLineLength, func() error { r.Close(); return w.Close() })}
	}
	return end(cr, cw), end(sr, sw)
}

// connTransport is a transport whose one connection already exists.
type connTransport struct{ conn mcp.Connection }

// Connect implements mcp.Transport.
func (t connTransport) Connect(context.Context) (mcp.Connection, error) { return t.conn, nil }

// pipeBackend is a custom backend spec reaching server over pipes framed by
// jsonrpcio, as a stdio backend is reached (without its process).
func pipeBackend(b *testing.B, name string, server *mcp.Server) backend.Spec {
	return backend.Spec{Backend: config.Backend{Name: name, Transport: backend.TransportCustom}, Dial: func(ctx context.Context) (mcp.Transport, error) {
		ct, st := pipeTransports(b)
		if _, err := server.Connect(context.Background(), st, nil); err != nil {
			return nil, err
		}
		return ct, nil
	}}
}
