package gateway

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/isogate/isogate/config"
	"github.com/isogate/isogate/internal/app"
	"github.com/isogate/isogate/internal/backend"
)

// benchEchoEnv, when set to "1", makes the test binary serve echoServer over
// stdio instead of running tests: the stdio backend of BenchmarkPassthrough,
// run both directly and behind `isogate serve`.
const benchEchoEnv = "ISOGATE_BENCH_ECHO_BACKEND"

// runEchoBackendIfRequested serves echoServer over stdio and exits when
// benchEchoEnv asks for it (called from TestMain).
func runEchoBackendIfRequested() {
	if os.Getenv(benchEchoEnv) != "1" {
		return
	}
	if err := echoServer().Run(context.Background(), &mcp.StdioTransport{}); err != nil {
		fmt.Fprintln(os.Stderr, "echo backend:", err)
		os.Exit(1)
	}
	os.Exit(0)
}

type echoArgs struct {
	Message string `json:"message"`
}

// echoServer is the trivial backend of BenchmarkPassthrough: one tool,
// echo, returning its message as text.
func echoServer() *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "echo-backend", Version: "1"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "echo", Description: "Returns its message."},
		func(_ context.Context, _ *mcp.CallToolRequest, in echoArgs) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: in.Message}}}, nil, nil
		})
	return s
}

// isogateBinary builds ./cmd/isogate once per test binary run.
var isogateBinary = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "isogate-bench")
	if err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "isogate")
	out, err := exec.Command("go", "build", "-o", bin, "github.com/isogate/isogate/cmd/isogate").CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("building isogate: %v: %s", err, out)
	}
	return bin, nil
})

// BenchmarkPassthrough measures what a passthrough tools/call costs through
// isogate (server.expose: passthrough) against the same client calling the
// same echo backend directly, over stdio and over streamable HTTP. Each
// iteration makes one direct call and one call through isogate, in
// alternating order, so machine noise hits both alike; the metrics are
// per-call percentiles of those samples (µs) and the p50/p90 deltas. Over
// HTTP, hop-p50-us is a go-sdk call to the echo backend over in-memory
// transports, the hop isogate itself makes to it (over stdio that hop is the
// direct call). The goals (issue 22) are delta ≤ 300 µs p50 over stdio and ≤ 500 µs over HTTP.
//
//	go test -run XXX -bench Passthrough -benchtime 2000x ./gateway/
func BenchmarkPassthrough(b *testing.B) {
	b.Run("stdio", func(b *testing.B) {
		ctx := context.Background()
		self, err := os.Executable()
		if err != nil {
			b.Fatal(err)
		}
		bin, err := isogateBinary()
		if err != nil {
			b.Fatal(err)
		}
		backendCmd := exec.Command(self)
		backendCmd.Env = append(os.Environ(), benchEchoEnv+"=1")
		direct := connectBench(b, &mcp.CommandTransport{Command: backendCmd}, "")

		dir := b.TempDir()
		cfgPath := filepath.Join(dir, "isogate.yaml")
		yaml := fmt.Sprintf("server:\n  cache_dir: %q\n  log_level: error\n  expose: passthrough\nbackends:\n  echo:\n    command: %q\n    env:\n      %s: \"1\"\n",
			filepath.Join(dir, "cache"), self, benchEchoEnv)
		if err := os.WriteFile(cfgPath, []byte(yaml), 0o600); err != nil {
			b.Fatal(err)
		}
		through := connectBench(b, &mcp.CommandTransport{Command: exec.Command(bin, "serve", "--config", cfgPath)}, "")
		waitForTool(b, ctx, through, "echo")
		comparePassthrough(b, ctx, direct, through, nil)
	})
	b.Run("http", func(b *testing.B) {
		ctx := context.Background()
		// One server for every request, as isogate has (the go-sdk asks
		// getServer on each request, and building a server is not free).
		echo := echoServer()
		directSrv := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return echo }, nil))
		b.Cleanup(directSrv.Close)
		direct := connectBench(b, &mcp.StreamableClientTransport{Endpoint: directSrv.URL}, "")

		cfg := config.Default()
		cfg.Server.CacheDir = b.TempDir()
		cfg.Server.Expose = config.ExposePassthrough
		cfg.Sandbox.Isolation = config.IsolationThread
		g, err := build(cfg, app.Options{Runner: testPool(), Logger: slog.New(slog.DiscardHandler), ExtraSpecs: []backend.Spec{backend.InMemory("echo", echoServer())}})
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
		gwSrv := httptest.NewServer(g.HTTPHandler())
		b.Cleanup(gwSrv.Close)
		through := connectBench(b, &mcp.StreamableClientTransport{Endpoint: gwSrv.URL + "/mcp"}, "")
		waitForTool(b, ctx, through, "echo")
		// isogate's own hop to an in-process backend is a go-sdk session
		// over in-memory transports, on the newest version (as isogate's
		// backend sessions are): timed too, as the floor of that hop.
		ct, st := mcp.NewInMemoryTransports()
		ss, err := echoServer().Connect(ctx, st, nil)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { ss.Close() })
		hop := connectBench(b, ct, "")
		comparePassthrough(b, ctx, direct, through, hop)
	})
}

// connectBench connects a go-sdk client over t asking for protocol version
// (the newest when empty), closed at cleanup.
func connectBench(b *testing.B, t mcp.Transport, version string) *mcp.ClientSession {
	b.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil).Connect(ctx, t,
		&mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		b.Fatalf("connect: %v", err)
	}
	b.Cleanup(func() { cs.Close() })
	return cs
}

// waitForTool waits until cs lists the tool name (isogate lists a backend's
// tools once it has connected).
func waitForTool(b *testing.B, ctx context.Context, cs *mcp.ClientSession, name string) {
	b.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		res, err := cs.ListTools(ctx, nil)
		if err != nil {
			b.Fatal(err)
		}
		for _, t := range res.Tools {
			if t.Name == name {
				return
			}
		}
		if time.Now().After(deadline) {
			b.Fatalf("tool %s not listed after 30s", name)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// comparePassthrough times b.N echo calls on each session, interleaved
// (alternating which goes first), after a warm-up, and reports per-call
// percentiles in µs. hop, when not nil, is timed the same way (before the
// pair) and reported as hop-p50-us.
func comparePassthrough(b *testing.B, ctx context.Context, direct, through, hop *mcp.ClientSession) {
	b.Helper()
	name := func(cs *mcp.ClientSession) string {
		switch cs {
		case direct:
			return "direct"
		case through:
			return "through isogate"
		}
		return "in-memory hop"
	}
	call := func(cs *mcp.ClientSession) time.Duration {
		// Fresh params each call: the go-sdk client writes its session's
		// protocol version into the params' _meta, which must not leak to
		// another session (a 2025-11-25 session sending 2026-07-28 is
		// refused).
		params := &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"message": "hello"}}
		start := time.Now()
		res, err := cs.CallTool(ctx, params)
		d := time.Since(start)
		if err != nil {
			b.Fatalf("%s: %v", name(cs), err)
		}
		if res.IsError || len(res.Content) != 1 {
			b.Fatalf("echo result: %+v", res)
		}
		if tc, ok := res.Content[0].(*mcp.TextContent); !ok || tc.Text != "hello" {
			b.Fatalf("echo result content: %+v", res.Content[0])
		}
		return d
	}
	for _, cs := range []*mcp.ClientSession{direct, through, hop} {
		if cs != nil && b.N > 1 {
			b.Logf("%s: protocol %s", name(cs), cs.InitializeResult().ProtocolVersion)
		}
	}
	for range 200 {
		call(direct)
		call(through)
		if hop != nil {
			call(hop)
		}
	}
	ds := make([]time.Duration, 0, b.N)
	ts := make([]time.Duration, 0, b.N)
	hs := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := range b.N {
		if hop != nil {
			hs = append(hs, call(hop))
		}
		if i%2 == 0 {
			ds = append(ds, call(direct))
			ts = append(ts, call(through))
		} else {
			ts = append(ts, call(through))
			ds = append(ds, call(direct))
		}
	}
	b.StopTimer()
	us := func(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }
	dp50, dp90 := percentile(ds, 50), percentile(ds, 90)
	tp50, tp90 := percentile(ts, 50), percentile(ts, 90)
	b.ReportMetric(us(dp50), "direct-p50-us")
	b.ReportMetric(us(dp90), "direct-p90-us")
	b.ReportMetric(us(tp50), "isogate-p50-us")
	b.ReportMetric(us(tp90), "isogate-p90-us")
	b.ReportMetric(us(tp50-dp50), "delta-p50-us")
	b.ReportMetric(us(tp90-dp90), "delta-p90-us")
	if hop != nil {
		b.ReportMetric(us(percentile(hs, 50)), "hop-p50-us")
	}
	b.ReportMetric(0, "ns/op") // an iteration is two calls; the percentiles say more
}

// percentile is the p-th percentile (nearest rank) of samples, which it sorts.
func percentile(samples []time.Duration, p int) time.Duration {
	if len(samples) == 0 {
		return 0
	}
	slices.Sort(samples)
	i := (len(samples)*p + 99) / 100
	return samples[max(i-1, 0)]
}
