package gateway

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/isogate/isogate/config"
	"github.com/isogate/isogate/internal/app"
	"github.com/isogate/isogate/internal/backend"
	"github.com/isogate/isogate/internal/catalog"
	"github.com/isogate/isogate/internal/codemode"
	"github.com/isogate/isogate/v8sandbox"
)

var testPool = sync.OnceValue(func() *v8sandbox.Pool { return v8sandbox.NewPool(v8sandbox.Options{Workers: 4}) })

func everythingPath(t testing.TB) string {
	t.Helper()
	p, _ := filepath.Abs("../examples/node_modules/@modelcontextprotocol/server-everything/dist/index.js")
	if _, err := os.Stat(p); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("server-everything is not installed (make deps): %v", err)
		}
		t.Skip("server-everything is not installed; run make deps")
	}
	return p
}

type slowArgs struct {
	MS int `json:"ms"`
}

// harness is a gateway over the real server-everything (stdio) and an
// in-process go-sdk backend, with a real MCP client connected in memory.
type harness struct {
	g         *Gateway
	cs        *mcp.ClientSession
	cancelled chan struct{} // one value per slow-op call ended by cancellation
	slowStart chan struct{} // one value per slow-op call that started waiting
	progress  chan *mcp.ProgressNotificationParams
}

// isolations runs f once per sandbox isolation mode: both modes pass the
// same tests.
func isolations(t *testing.T, f func(t *testing.T, mode config.Isolation)) {
	for _, mode := range []config.Isolation{config.IsolationThread, config.IsolationProcess} {
		t.Run(string(mode), func(t *testing.T) { f(t, mode) })
	}
}

// withIsolation makes a harness use the given isolation mode.
func withIsolation(mode config.Isolation, more ...func(*config.Config)) func(*config.Config) {
	return func(c *config.Config) {
		c.Sandbox.Isolation = mode
		for _, m := range more {
			m(c)
		}
	}
}

func newHarness(t testing.TB, mutate func(*config.Config)) *harness {
	t.Helper()
	h := &harness{progress: make(chan *mcp.ProgressNotificationParams, 100), slowStart: make(chan struct{}, 100), cancelled: make(chan struct{}, 100)}
	cfg := config.Default()
	cfg.Server.CacheDir = t.TempDir()
	cfg.Sandbox.Timeout = 5 * time.Second
	cfg.Sandbox.Isolation = config.IsolationThread
	cfg.Backends = map[string]config.Backend{"everything": {
		Name: "everything", Transport: config.TransportStdio, Command: "node",
		Args: []string{everythingPath(t), "stdio"}, Timeout: 10 * time.Second, MaxConcurrentCalls: 8,
	}}
	if mutate != nil {
		mutate(cfg)
	}
	local := mcp.NewServer(&mcp.Implementation{Name: "local"}, nil)
	mcp.AddTool(local, &mcp.Tool{Name: "slow-op", Description: "Sleeps for ms milliseconds unless cancelled."},
		func(ctx context.Context, _ *mcp.CallToolRequest, in slowArgs) (*mcp.CallToolResult, any, error) {
			select {
			case h.slowStart <- struct{}{}:
			default:
			}
			select {
			case <-time.After(time.Duration(in.MS) * time.Millisecond):
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: `{"slept":true}`}}}, nil, nil
			case <-ctx.Done():
				select {
				case h.cancelled <- struct{}{}:
				default:
				}
				return nil, nil, ctx.Err()
			}
		})
	mcp.AddTool(local, &mcp.Tool{Name: "noop", Description: "Returns its arguments."},
		func(ctx context.Context, _ *mcp.CallToolRequest, in map[string]any) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: `{"ok":true}`}}}, nil, nil
		})
	var runner v8sandbox.Runner = testPool() // shared; process mode gets its own workers
	if cfg.Sandbox.Isolation == config.IsolationProcess {
		runner = nil
	}
	g := startGateway(t, cfg, app.Options{Runner: runner, ExtraSpecs: []backend.Spec{backend.InMemory("local-backend", local)}})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := g.app.Backends.WaitHealthy(ctx); err != nil {
		t.Fatal(err)
	}
	st, ct := mcp.NewInMemoryTransports()
	if _, err := g.Server().Connect(context.Background(), st, nil); err != nil {
		t.Fatal(err)
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "agent"}, &mcp.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
			h.progress <- req.Params
		},
	})
	cs, err := client.Connect(context.Background(), ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	h.g, h.cs = g, cs
	return h
}

func (h *harness) chain(t *testing.T, args map[string]any) (string, bool) {
	t.Helper()
	res, err := h.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "call_tool_chain", Arguments: args})
	if err != nil {
		t.Fatal(err)
	}
	return res.Content[0].(*mcp.TextContent).Text, res.IsError
}

func TestCodeModeAgainstRealServerEverything(t *testing.T) { isolations(t, testCodeMode) }

func testCodeMode(t *testing.T, mode config.Isolation) {
	h := newHarness(t, withIsolation(mode))
	cases := []struct{ name, code, want string }{
		{"hyphenated names", `const r = await everything.get_sum({a: 20, b: 22}); return r`, "42"},
		{"original name", `return await everything["get-sum"]({a: 1, b: 1})`, "2"},
		{"mirror", `return globalThis["local-backend"] === local_backend`, "true"},
		{"structured content", `const w = await everything.get_structured_content({location: "New York"}); return typeof w`, "object"},
		{"image descriptor", `const img = await everything.get_tiny_image({}); return JSON.stringify(img).includes("base64") ? "blob!" : img`, `"mimeType": "image/png"`},
		{"both backends", `const [s, e] = await Promise.all([everything.get_sum({a: 1, b: 2}), everything.echo({message: "x"})]); return [s, e]`, "Echo: x"},
		{"typescript", "type N = number;\nconst xs: N[] = [1, 2, 3];\nreturn xs.map((x: N): N => x * 2);", "6"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			text, isErr := h.chain(t, map[string]any{"code": c.code})
			if isErr || !strings.Contains(text, c.want) {
				t.Fatalf("isError=%v\n%s", isErr, text)
			}
		})
	}
}

func TestProgressAndStats(t *testing.T) {
	h := newHarness(t, nil)
	res, err := h.cs.CallTool(context.Background(), &mcp.CallToolParams{
		Name:      "call_tool_chain",
		Meta:      mcp.Meta{"progressToken": "tok-1"},
		Arguments: map[string]any{"code": `return await Promise.all([1, 2, 3].map(i => local_backend.slow_op({ms: 10 * i})))`},
	})
	if err != nil || res.IsError {
		t.Fatalf("%v %+v", err, res)
	}
	got := 0
	for got < 3 {
		select {
		case p := <-h.progress:
			if p.ProgressToken != "tok-1" {
				t.Fatalf("token %v", p.ProgressToken)
			}
			got++
		case <-time.After(5 * time.Second):
			t.Fatalf("received %d progress notifications, want 3", got)
		}
	}
}

func TestCancellationStopsTheRunAndBackendCalls(t *testing.T) { isolations(t, testCancellation) }

func testCancellation(t *testing.T, mode config.Isolation) {
	h := newHarness(t, withIsolation(mode))
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		_, err := h.cs.CallTool(ctx, &mcp.CallToolParams{Name: "call_tool_chain",
			Arguments: map[string]any{"code": `await local_backend.slow_op({ms: 20000}); return 1`}})
		errc <- err
	}()
	<-h.slowStart // the backend call is in flight
	cancel()
	if err := <-errc; err == nil {
		t.Fatal("cancelled call returned no error")
	}
	select {
	case <-h.cancelled:
	case <-time.After(15 * time.Second): // well before slow_op's 20 s would end it
		t.Fatal("the in-flight backend call was not cancelled")
	}
	if text, isErr := h.chain(t, map[string]any{"code": `return 1 + 1`}); isErr || text != "2" {
		t.Fatalf("gateway stopped serving: %s", text)
	}
}

func TestLimitsMidChainKeepServing(t *testing.T) { isolations(t, testLimitsMidChain) }

func testLimitsMidChain(t *testing.T, mode config.Isolation) {
	// A heap bomb ends by the heap cap, however slowly a loaded machine
	// fills 32 MB: the deadline is far from the harness's 5 s.
	h := newHarness(t, withIsolation(mode, func(c *config.Config) { c.Sandbox.MaxHeapMB = 32; c.Sandbox.Timeout = 5 * time.Minute }))
	text, isErr := h.chain(t, map[string]any{"code": `await everything.echo({message: "a"}); for (;;) {}`, "timeout": 300})
	if !isErr || !strings.Contains(text, "TIMEOUT: execution exceeded 300 ms") {
		t.Fatalf("timeout: %s", text)
	}
	text, isErr = h.chain(t, map[string]any{"code": `await everything.echo({message: "a"}); const a = []; for (;;) a.push([1, 2, 3])`})
	if !isErr || !strings.Contains(text, "HEAP_LIMIT") {
		t.Fatalf("heap: %s", text)
	}
	if text, isErr := h.chain(t, map[string]any{"code": `return await everything.echo({message: "still here"})`}); isErr || !strings.Contains(text, "still here") {
		t.Fatalf("after limits: %s", text)
	}
}

func TestFullResultIsRetrievableAsResource(t *testing.T) {
	h := newHarness(t, nil)
	text, isErr := h.chain(t, map[string]any{"code": `return Array.from({length: 300}, (_, i) => ({id: i, name: "item " + i, pad: "x".repeat(50)}))`})
	if isErr || !strings.Contains(text, "isogate://result/") {
		t.Fatalf("not summarised: %s", text)
	}
	i := strings.Index(text, "isogate://result/")
	uri := strings.Fields(text[i:])[0]
	uri = strings.TrimRight(uri, ").,")
	res, err := h.cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: uri})
	if err != nil || !strings.Contains(res.Contents[0].Text, "item 299") {
		t.Fatalf("reading %s: %v", uri, err)
	}
	part, err := h.cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: uri + "/299/name"})
	if err != nil || strings.TrimSpace(part.Contents[0].Text) != `"item 299"` {
		t.Fatalf("reading a part: %v %+v", err, part)
	}
	// Another session of this process reads it: without authentication
	// the process is the one principal, and owns what its sessions make.
	st, ct := mcp.NewInMemoryTransports()
	h.g.Server().Connect(context.Background(), st, nil)
	other, err := mcp.NewClient(&mcp.Implementation{Name: "other"}, nil).Connect(context.Background(), ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if res, err := other.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: uri}); err != nil || !strings.Contains(res.Contents[0].Text, "item 299") {
		t.Fatalf("another session of the process reading the stored result: %v", err)
	}
}

func searchOpts() catalog.SearchOptions    { return catalog.SearchOptions{Limit: 5} }
func codeReq(code string) codemode.Request { return codemode.Request{Code: code} }
func contains(s, sub string) bool          { return strings.Contains(s, sub) }

// TestRunCodeSurvivesAbortingScripts: in process isolation, run_code's
// sandbox is a worker process too, so a script that makes V8 abort costs a
// worker, not the gateway.
func TestRunCodeSurvivesAbortingScripts(t *testing.T) {
	h := newHarness(t, withIsolation(config.IsolationProcess, func(c *config.Config) { c.RunCode.Enabled = true }))
	call := func(code string) (string, bool) {
		res, err := h.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "run_code", Arguments: map[string]any{"code": code}})
		if err != nil {
			t.Fatal(err)
		}
		return res.Content[0].(*mcp.TextContent).Text, res.IsError
	}
	text, isErr := call(`const parts = "x".repeat(2 ** 27).split(""); return parts.length`)
	if !isErr || !strings.Contains(text, "VMError") {
		t.Fatalf("abort: isError=%v %s", isErr, text)
	}
	if text, isErr := call(`return 6 * 7`); isErr || !strings.Contains(text, "42") {
		t.Fatalf("after abort: %s", text)
	}
}
