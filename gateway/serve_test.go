package gateway

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/isogate/isogate/config"
	"github.com/isogate/isogate/internal/app"
	"github.com/isogate/isogate/internal/backend"
	"github.com/isogate/isogate/internal/testutil"
	"github.com/isogate/isogate/v8sandbox"
	"github.com/isogate/isogate/v8sandbox/procpool"
)

// httpGateway is a gateway served over real HTTP on a loopback port, with
// one in-process backend whose "block" tool waits until cancelled.
type httpGateway struct {
	g         *Gateway
	url       string // http://127.0.0.1:port/mcp
	started   chan struct{}
	cancelled chan struct{}
	extra     []backend.Spec
	// traceparents receives the traceparent of the calls echo received.
	traceparents chan string
}

func newHTTPGateway(t *testing.T, mutate func(*config.Config), extra ...backend.Spec) *httpGateway {
	t.Helper()
	h := &httpGateway{started: make(chan struct{}, 10), cancelled: make(chan struct{}, 10), extra: extra,
		traceparents: make(chan string, 10)}
	cfg := config.Default()
	cfg.Server.CacheDir = t.TempDir()
	cfg.Sandbox.Isolation = config.IsolationThread
	cfg.Sandbox.Timeout = time.Minute
	if mutate != nil {
		mutate(cfg)
	}
	local := mcp.NewServer(&mcp.Implementation{Name: "local"}, nil)
	mcp.AddTool(local, &mcp.Tool{Name: "block", Description: "Waits until cancelled."},
		func(ctx context.Context, _ *mcp.CallToolRequest, _ map[string]any) (*mcp.CallToolResult, any, error) {
			h.started <- struct{}{}
			<-ctx.Done()
			h.cancelled <- struct{}{}
			return nil, nil, ctx.Err()
		})
	mcp.AddTool(local, &mcp.Tool{Name: "echo", Description: "Returns its arguments."},
		func(ctx context.Context, req *mcp.CallToolRequest, in map[string]any) (*mcp.CallToolResult, any, error) {
			if tp, ok := req.Params.Meta["traceparent"].(string); ok {
				select {
				case h.traceparents <- tp:
				default:
				}
			}
			b, _ := json.Marshal(in)
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(b)}}}, nil, nil
		})
	var runner v8sandbox.Runner = testPool()
	if cfg.Sandbox.Isolation == config.IsolationProcess {
		runner = nil
	}
	specs := append([]backend.Spec{backend.InMemory("local", local)}, h.extra...)
	g, base := serveHealthy(t, cfg, app.Options{Runner: runner, ExtraSpecs: specs})
	h.g, h.url = g, base+"/mcp"
	return h
}

// serveHealthy is startHealthy serving the gateway's HTTP handler on a
// loopback port until the test ends; base is its http://host:port.
func serveHealthy(t *testing.T, cfg *config.Config, opts app.Options) (g *Gateway, base string) {
	t.Helper()
	g = startHealthy(t, cfg, opts)
	ln, err := g.Listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = g.ServeHTTP(ctx, ln); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	return g, "http://" + ln.Addr().String()
}

// connect opens a go-sdk client session over streamable HTTP.
func (h *httpGateway) connect(t *testing.T, client *http.Client) *mcp.ClientSession {
	t.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: "test"}, nil)
	cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: h.url, HTTPClient: client}, nil)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

const initializeBody = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`

// post sends one raw MCP POST and returns the response (body unread).
func post(t *testing.T, ctx context.Context, url, body string, header map[string]string) (*http.Response, error) {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range header {
		req.Header.Set(k, v)
	}
	return http.DefaultClient.Do(req)
}

// rawInitialize opens a session with one raw initialize POST (protocol
// 2025-11-25, nothing sent after it) and returns its Mcp-Session-Id.
func rawInitialize(t *testing.T, url string) string {
	t.Helper()
	resp, err := post(t, context.Background(), url, initializeBody, nil)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	sid := resp.Header.Get("Mcp-Session-Id")
	if resp.StatusCode != http.StatusOK || sid == "" {
		t.Fatalf("initialize: status %d, session %q", resp.StatusCode, sid)
	}
	return sid
}

func TestUnauthenticatedSlowBodyGets401AtOnce(t *testing.T) {
	h := newHTTPGateway(t, func(c *config.Config) { c.Server.AuthToken = "secret" })
	conn, err := net.Dial("tcp", strings.TrimPrefix(strings.TrimSuffix(h.url, "/mcp"), "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	// Headers promise 100 000 bytes; only 10 arrive, and never the rest.
	fmt.Fprintf(conn, "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{\"jsonrpc\"")
	_ = conn.SetReadDeadline(time.Now().Add(20 * time.Second)) // a failure bound, not a synchronisation
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("no response while the body is pending: %v", err)
	}
	if resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("status %d, want 401", resp.StatusCode)
	}
	// The same with a wrong token and a chunked body that never ends.
	conn2, err := net.Dial("tcp", conn.RemoteAddr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn2.Close()
	fmt.Fprintf(conn2, "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer wrong\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n")
	_ = conn2.SetReadDeadline(time.Now().Add(20 * time.Second))
	if resp, err := http.ReadResponse(bufio.NewReader(conn2), nil); err != nil || resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("chunked: %v %v", resp, err)
	}
	// The right token still works through a real client.
	cs := h.connect(t, &http.Client{Transport: bearer{"secret"}})
	if _, err := cs.ListTools(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
}

type bearer struct{ token string }

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}

func TestOriginValidation(t *testing.T) {
	h := newHTTPGateway(t, func(c *config.Config) { c.Server.AllowedOrigins = []string{"https://app.example.com"} })
	port := h.url[len("http://127.0.0.1:") : len(h.url)-len("/mcp")]
	for _, tt := range []struct {
		origin string
		want   int
	}{
		{"", http.StatusOK},
		{"https://evil.example", http.StatusForbidden},
		{"null", http.StatusForbidden},
		{"http://127.0.0.1.evil.example:" + port, http.StatusForbidden},
		{"https://app.example.com", http.StatusOK},
		{"https://APP.example.com/", http.StatusOK},
		{"http://localhost:3000", http.StatusOK}, // loopback origin, loopback listener
		{"http://127.0.0.1:" + port, http.StatusOK},
	} {
		hdr := map[string]string{}
		if tt.origin != "" {
			hdr["Origin"] = tt.origin
		}
		resp, err := post(t, context.Background(), h.url, initializeBody, hdr)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != tt.want {
			t.Errorf("Origin %q: status %d, want %d", tt.origin, resp.StatusCode, tt.want)
		}
	}
}

func TestMaxSessionsClosesTheLongestIdle(t *testing.T) {
	h := newHTTPGateway(t, func(c *config.Config) { c.Server.MaxSessions = 2 })
	ctx := context.Background()
	first := h.connect(t, nil)
	second := h.connect(t, nil)
	if _, err := first.ListTools(ctx, nil); err != nil { // first is now the most recently used
		t.Fatal(err)
	}
	third := h.connect(t, nil)
	if _, err := second.ListTools(ctx, nil); err == nil {
		t.Fatal("the longest idle session survived past server.max_sessions")
	}
	for i, cs := range []*mcp.ClientSession{first, third} {
		if _, err := cs.ListTools(ctx, nil); err != nil {
			t.Fatalf("session %d: %v", i, err)
		}
	}
	if n := h.g.app.Surface.OpenSessions(); n != 2 {
		t.Fatalf("%d sessions tracked, want 2", n)
	}
}

func TestIdleSessionIsClosed(t *testing.T) {
	h := newHTTPGateway(t, func(c *config.Config) { c.Server.SessionIdleTimeout = 100 * time.Millisecond })
	// The session is opened by one raw initialize POST and nothing follows
	// it: a client library sends notifications/initialized next, which a
	// loaded machine can delay past the 100 ms, finding the session closed
	// already (connect failed then).
	sid := rawInitialize(t, h.url)
	// Closed by the go-sdk and forgotten by the tracker: no event tells.
	// Only the tracker is polled: a request would keep the session alive.
	testutil.Eventually(t, 20*time.Second, func() bool { return h.g.app.Surface.OpenSessions() == 0 },
		"an idle session to be closed")
	resp, err := post(t, context.Background(), h.url, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`,
		map[string]string{"Mcp-Session-Id": sid, "Mcp-Protocol-Version": "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Fatalf("the closed session's request: status %d, want 404", resp.StatusCode)
	}
}

// TestDroppedConnectionEndsTheRun drops the HTTP connection of a session's
// tools/call mid-run: the run and its backend call are cancelled and its
// only sandbox slot serves the next run at once.
func TestDroppedConnectionEndsTheRun(t *testing.T) {
	h := newHTTPGateway(t, func(c *config.Config) { c.Sandbox.MaxConcurrent = 1 })
	hdr := map[string]string{"Mcp-Session-Id": rawInitialize(t, h.url), "Mcp-Protocol-Version": "2025-11-25"}
	resp, err := post(t, context.Background(), h.url, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, hdr)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()

	ctx, drop := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		resp, err := post(t, ctx, h.url, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"call_tool_chain","arguments":{"code":"await local.block({}); return 1"}}}`, hdr)
		if err == nil {
			_, err = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
		errc <- err
	}()
	<-h.started
	drop()
	<-errc
	select {
	case <-h.cancelled:
	case <-time.After(20 * time.Second):
		t.Fatal("the backend call outlived its dropped HTTP request")
	}
	// The single slot is free again: a run completes long before the first
	// run's own timeout (one minute).
	cs := h.connect(t, nil)
	rctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	res, err := cs.CallTool(rctx, &mcp.CallToolParams{Name: "call_tool_chain", Arguments: map[string]any{"code": "return 6*7"}})
	if err != nil || res.IsError || res.Content[0].(*mcp.TextContent).Text != "42" {
		t.Fatalf("next run: %v %+v", err, res)
	}
}

// get fetches a path next to /mcp and returns its status and body.
func (h *httpGateway) get(t *testing.T, path string) (int, string) {
	t.Helper()
	resp, err := http.Get(strings.TrimSuffix(h.url, "/mcp") + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// sample returns the value of the first sample of metric whose labels
// include every pair in labels, and whether there is one.
func sample(text, metric string, labels ...string) (float64, bool) {
	for _, line := range strings.Split(text, "\n") {
		name, rest, ok := strings.Cut(line, " ")
		if !ok || strings.HasPrefix(line, "#") {
			continue
		}
		base, lbl, _ := strings.Cut(name, "{")
		if base != metric {
			continue
		}
		match := true
		for i := 0; i+1 < len(labels); i += 2 {
			if !strings.Contains(lbl, labels[i]+`="`+labels[i+1]+`"`) {
				match = false
			}
		}
		if match {
			v, err := strconv.ParseFloat(strings.TrimSpace(rest), 64)
			return v, err == nil
		}
	}
	return 0, false
}

func TestMetricsMoveAfterCalls(t *testing.T) {
	h := newHTTPGateway(t, func(c *config.Config) { c.Sandbox.Isolation = config.IsolationProcess })
	cs := h.connect(t, nil)
	ctx := context.Background()
	for i := range 3 {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "call_tool_chain",
			Arguments: map[string]any{"code": fmt.Sprintf("const r = await local.echo({i: %d}); const s = await local.echo({i: 2}); return [r, s]", i)}})
		if err != nil || res.IsError {
			t.Fatalf("call %d: %v %+v", i, err, res)
		}
	}
	if res, _ := cs.CallTool(ctx, &mcp.CallToolParams{Name: "call_tool_chain", Arguments: map[string]any{"code": "throw new Error('boom')"}}); !res.IsError {
		t.Fatal("a throwing program succeeded")
	}
	code, text := h.get(t, "/metrics")
	if code != http.StatusOK {
		t.Fatalf("/metrics: %d", code)
	}
	for _, tt := range []struct {
		metric string
		labels []string
		min    float64
	}{
		{"isogate_tool_calls_total", []string{"backend", "local", "tool", "echo", "outcome", "ok"}, 6},
		{"isogate_tool_call_duration_seconds_count", []string{"backend", "local"}, 6},
		{"isogate_runs_total", []string{"tier", "v8", "outcome", "ok"}, 3},
		{"isogate_runs_total", []string{"outcome", "EVAL_ERROR"}, 1},
		{"isogate_run_duration_seconds_count", []string{"tier", "v8"}, 4},
		{"isogate_output_bytes_total", []string{"kind", "processed"}, 1},
		{"isogate_output_bytes_total", []string{"kind", "returned"}, 1},
		{"isogate_backend_up", []string{"backend", "local"}, 1},
		{"isogate_backend_restarts_total", []string{"backend", "local"}, 0},
		{"isogate_sandbox_workers", []string{"state", "idle"}, 1},
		{"isogate_sandbox_workers", []string{"state", "busy"}, 0},
		{"isogate_sandbox_deaths_total", []string{"cause", "crashed"}, 0},
	} {
		v, ok := sample(text, tt.metric, tt.labels...)
		if !ok || v < tt.min {
			t.Errorf("%s%v = %v (present %v), want ≥ %v", tt.metric, tt.labels, v, ok, tt.min)
		}
	}
	if strings.Contains(text, "boom") || strings.Contains(text, `"i"`) {
		t.Error("program text or arguments leaked into metric labels")
	}

	// A run held inside a backend call shows a busy worker.
	done := make(chan error, 1)
	callCtx, cancelCall := context.WithCancel(ctx)
	defer cancelCall()
	go func() {
		_, err := cs.CallTool(callCtx, &mcp.CallToolParams{Name: "call_tool_chain", Arguments: map[string]any{"code": "const r = await local.block({}); const s = [r]; return s.length"}})
		done <- err
	}()
	<-h.started
	if _, text := h.get(t, "/metrics"); !hasSample(text, "isogate_sandbox_workers", 1, "state", "busy") {
		t.Error("isogate_sandbox_workers{state=\"busy\"} < 1 while a run waits on a backend call")
	}
	cancelCall()
	<-done
	<-h.cancelled

	// A worker process killed from outside counts as a crash.
	pool, ok := h.g.app.Runner.(*procpool.Pool)
	if !ok {
		t.Fatalf("runner is %T, want a process pool", h.g.app.Runner)
	}
	workers := pool.Stats().Workers
	if len(workers) == 0 {
		t.Fatal("no sandbox worker processes")
	}
	if err := syscall.Kill(workers[0].PID, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	waitForSample(t, h, "isogate_sandbox_deaths_total", 1, "cause", "crashed")
}

// hasSample reports whether the scrape has the sample with at least min.
func hasSample(text, metric string, min float64, labels ...string) bool {
	v, ok := sample(text, metric, labels...)
	return ok && v >= min
}

// waitForSample scrapes /metrics until the sample reaches min (polling an
// outcome that follows an asynchronous event, bounded by 30 s).
func waitForSample(t *testing.T, h *httpGateway, metric string, min float64, labels ...string) {
	t.Helper()
	testutil.Eventually(t, 30*time.Second, func() bool {
		_, text := h.get(t, "/metrics")
		return hasSample(text, metric, min, labels...)
	}, "%s%v to reach %v", metric, labels, min)
}

func TestReadyzFlipsWhenABackendDies(t *testing.T) {
	marker := t.TempDir() + "/started"
	// Starts server-everything once; every restart fails.
	script := `if [ -e "$1" ]; then echo "refusing to restart" >&2; exit 1; fi; touch "$1"; exec node "$2" stdio`
	dying := backend.Spec{Backend: config.Backend{Name: "dying", Transport: config.TransportStdio, Command: "sh",
		Args: []string{"-c", script, "sh", marker, everythingPath(t)}}}
	h := newHTTPGateway(t, nil, dying)
	if code, body := h.get(t, "/readyz"); code != http.StatusOK {
		t.Fatalf("/readyz with every backend up: %d %s", code, body)
	}
	if code, _ := h.get(t, "/healthz"); code != http.StatusOK {
		t.Fatalf("/healthz: %d", code)
	}
	var pid int
	for _, st := range h.g.app.Backends.Status() {
		if st.Name == "dying" {
			pid = st.PID
		}
	}
	if pid <= 0 {
		t.Fatal("no pid for the stdio backend")
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	var body string
	testutil.Eventually(t, 30*time.Second, func() bool {
		var code int
		code, body = h.get(t, "/readyz")
		return code == http.StatusServiceUnavailable
	}, "/readyz to flip after the backend died")
	var got struct {
		Ready    bool
		NotReady []struct{ Name string } `json:"not_ready"`
	}
	if err := json.Unmarshal([]byte(body), &got); err != nil || got.Ready || len(got.NotReady) != 1 || got.NotReady[0].Name != "dying" {
		t.Fatalf("503 body %s (%v)", body, err)
	}
	if code, _ := h.get(t, "/healthz"); code != http.StatusOK {
		t.Fatalf("/healthz with a backend down: %d", code)
	}
	// The metrics follow: the backend is down and its restarts count.
	if _, text := h.get(t, "/metrics"); !hasSample(text, "isogate_backend_up", 0, "backend", "dying") || hasSample(text, "isogate_backend_up", 1, "backend", "dying") {
		t.Error(`isogate_backend_up{backend="dying"} is not 0 after /readyz flipped`)
	}
	waitForSample(t, h, "isogate_backend_restarts_total", 1, "backend", "dying")
}
