package codemode

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/isogate/isogate/internal/backend"
	"github.com/isogate/isogate/internal/catalog"
	"github.com/isogate/isogate/internal/codemode/output"
	"github.com/isogate/isogate/internal/pipeline"
	"github.com/isogate/isogate/internal/resultstore"
	"github.com/isogate/isogate/v8sandbox"
)

// sharedPool is the V8 pool of this package's tests.
var sharedPool = sync.OnceValue(func() *v8sandbox.Pool { return v8sandbox.NewPool(v8sandbox.Options{Workers: 4}) })

// countingRunner counts the runs that reach V8.
type countingRunner struct {
	v8sandbox.Runner
	runs atomic.Int32
}

func (c *countingRunner) Run(ctx context.Context, job v8sandbox.Job, host v8sandbox.Host) (v8sandbox.Result, error) {
	c.runs.Add(1)
	return c.Runner.Run(ctx, job, host)
}

// sessionCaller calls tools through a real MCP client session per backend.
type sessionCaller map[string]*mcp.ClientSession

func (s sessionCaller) CallTool(ctx context.Context, backend, tool string, args json.RawMessage) (*mcp.CallToolResult, error) {
	cs, ok := s[backend]
	if !ok {
		return nil, fmt.Errorf("backend %q is not connected", backend)
	}
	return cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
}

// Call implements pipeline.Caller: the last stage of the fixture's pipeline.
func (s sessionCaller) Call(ctx context.Context, c *pipeline.Call) (*mcp.CallToolResult, error) {
	return s.CallTool(ctx, c.Backend, c.Tool, c.Args)
}

// viaPipeline routes code mode's calls through a call pipeline, as the
// gateway does.
type viaPipeline struct{ p pipeline.Caller }

func (v viaPipeline) CallTool(ctx context.Context, backend, tool string, args json.RawMessage) (*mcp.CallToolResult, error) {
	return v.p.Call(ctx, &pipeline.Call{Backend: backend, Tool: tool, Args: args})
}

// downCaller answers every call as the backend manager does for a backend
// whose command does not exist.
type downCaller struct{}

func (downCaller) CallTool(ctx context.Context, b, tool string, args json.RawMessage) (*mcp.CallToolResult, error) {
	return nil, &backend.UnavailableError{Backend: b, State: backend.StateUnhealthy, LastError: `exec: "nope": executable file not found in $PATH`}
}

// fixture is an engine wired to real in-process MCP backends.
type fixture struct {
	engine  *Engine
	runner  *countingRunner
	store   *resultstore.Memory
	runs    *runLog
	catalog *catalog.Catalog
	peak    atomic.Int32
	// backendCalls counts the calls that reached a backend.
	backendCalls atomic.Int32
}

// countedBackend counts the calls that reach the fixture's backends.
type countedBackend struct {
	sessionCaller
	n *atomic.Int32
}

func (c countedBackend) Call(ctx context.Context, call *pipeline.Call) (*mcp.CallToolResult, error) {
	c.n.Add(1)
	return c.sessionCaller.Call(ctx, call)
}

type sumArgs struct {
	A float64 `json:"a"`
	B float64 `json:"b"`
}

type meetArgs struct {
	Calls int `json:"calls"`
}

type itemsArgs struct {
	N int `json:"n"`
}

// newFixture starts backends "everything" (tools with hyphens) and
// "my-backend", and an engine over them.
func newFixture(t *testing.T, opts Options) *fixture {
	t.Helper()
	f := &fixture{store: resultstore.NewMemory(resultstore.Limits{TTL: time.Minute, MaxBytes: 1 << 20}), runs: &runLog{}, catalog: catalog.New()}
	var inflight atomic.Int32

	everything := mcp.NewServer(&mcp.Implementation{Name: "everything"}, nil)
	mcp.AddTool(everything, &mcp.Tool{Name: "get-sum", Description: "Returns the sum of two numbers."},
		func(ctx context.Context, _ *mcp.CallToolRequest, in sumArgs) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf("The sum of %v and %v is %v.", in.A, in.B, in.A+in.B)}}}, nil, nil
		})
	mcp.AddTool(everything, &mcp.Tool{Name: "add", Description: "Adds two numbers, structured."},
		func(ctx context.Context, _ *mcp.CallToolRequest, in sumArgs) (*mcp.CallToolResult, map[string]any, error) {
			return nil, map[string]any{"sum": in.A + in.B, "note": "<&>\u2028"}, nil
		})
	mcp.AddTool(everything, &mcp.Tool{Name: "fail", Description: "Always fails."},
		func(ctx context.Context, _ *mcp.CallToolRequest, in map[string]any) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "quota exceeded"}}}, nil, nil
		})
	// meet returns once `calls` calls are inside it at the same time (or
	// the run ends): only calls made concurrently ever return.
	var meetMu sync.Mutex
	meetArrived, meetAll := 0, make(chan struct{})
	mcp.AddTool(everything, &mcp.Tool{Name: "meet", Description: "Waits for `calls` concurrent calls, counting them."},
		func(ctx context.Context, _ *mcp.CallToolRequest, in meetArgs) (*mcp.CallToolResult, any, error) {
			n := inflight.Add(1)
			defer inflight.Add(-1)
			for p := f.peak.Load(); n > p && !f.peak.CompareAndSwap(p, n); p = f.peak.Load() {
			}
			meetMu.Lock()
			all := meetAll
			if meetArrived++; meetArrived == in.Calls {
				close(meetAll)
				meetArrived, meetAll = 0, make(chan struct{})
			}
			meetMu.Unlock()
			select {
			case <-all:
			case <-ctx.Done():
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: `{"ok":true}`}}}, nil, nil
		})
	mcp.AddTool(everything, &mcp.Tool{Name: "items", Description: "Returns n issue records."},
		func(ctx context.Context, _ *mcp.CallToolRequest, in itemsArgs) (*mcp.CallToolResult, any, error) {
			items := make([]map[string]any, in.N)
			for i := range items {
				items[i] = map[string]any{"id": i + 1, "title": fmt.Sprintf("Issue number %d", i+1), "state": []string{"open", "closed"}[i%2],
					"body": strings.Repeat("lorem ipsum ", 10)}
			}
			b, _ := json.Marshal(items)
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(b)}}}, nil, nil
		})
	mcp.AddTool(everything, &mcp.Tool{Name: "tiny-image", Description: "Returns an image."},
		func(ctx context.Context, _ *mcp.CallToolRequest, in map[string]any) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "an image:"}, &mcp.ImageContent{MIMEType: "image/png", Data: make([]byte, 68)}}}, nil, nil
		})
	other := mcp.NewServer(&mcp.Implementation{Name: "other"}, nil)
	mcp.AddTool(other, &mcp.Tool{Name: "echo", Description: "Echoes the message."},
		func(ctx context.Context, _ *mcp.CallToolRequest, in map[string]any) (*mcp.CallToolResult, any, error) {
			b, _ := json.Marshal(in)
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(b)}}}, nil, nil
		})

	caller := sessionCaller{}
	for name, srv := range map[string]*mcp.Server{"everything": everything, "my-backend": other} {
		st, ct := mcp.NewInMemoryTransports()
		ss, err := srv.Connect(context.Background(), st, nil)
		if err != nil {
			t.Fatal(err)
		}
		client := mcp.NewClient(&mcp.Implementation{Name: "test"}, nil)
		cs, err := client.Connect(context.Background(), ct, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cs.Close(); ss.Close() })
		caller[name] = cs
		list, err := cs.ListTools(context.Background(), nil)
		if err != nil {
			t.Fatal(err)
		}
		f.catalog.SetBackend(name, nil, list.Tools)
	}
	f.runner = &countingRunner{Runner: sharedPool()}
	opts.Runner, opts.Catalog = f.runner, FromCatalog(f.catalog)
	opts.Caller = viaPipeline{pipeline.New(pipeline.Options{Backend: countedBackend{caller, &f.backendCalls}, Arguments: f.catalog.CheckArguments})}
	opts.Store, opts.Observer = f.store, f.runs
	if opts.Output == (output.Options{}) {
		opts.Output = output.DefaultOptions()
	}
	e, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	f.engine = e
	return f
}

func (f *fixture) exec(t *testing.T, code string) Response {
	t.Helper()
	return f.engine.Execute(context.Background(), Request{Code: code})
}

func (f *fixture) ok(t *testing.T, code string) Response {
	t.Helper()
	r := f.exec(t, code)
	if r.IsError {
		t.Fatalf("code %q failed: %s", code, r.Text)
	}
	return r
}

func (f *fixture) fails(t *testing.T, code string, wants ...string) Response {
	t.Helper()
	r := f.exec(t, code)
	if !r.IsError {
		t.Fatalf("code %q succeeded: %s", code, r.Text)
	}
	for _, w := range wants {
		if !strings.Contains(r.Text, w) {
			t.Fatalf("code %q: error text lacks %q:\n%s", code, w, r.Text)
		}
	}
	return r
}

// discardLogger drops the engine's per-run INFO lines (benchmarks).
func discardLogger() *slog.Logger { return slog.New(slog.DiscardHandler) }

// runLog is a codemode.RunObserver that keeps every run's summary.
type runLog struct {
	mu   sync.Mutex
	runs []RunSummary
}

func (l *runLog) StartRun(ctx context.Context) (context.Context, func(RunSummary)) {
	return ctx, func(s RunSummary) {
		l.mu.Lock()
		defer l.mu.Unlock()
		l.runs = append(l.runs, s)
	}
}

// byTier counts the runs of each tier and sums their processed and returned bytes.
func (l *runLog) byTier() (tiers map[string]int, processed, returned int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	tiers = map[string]int{}
	for _, s := range l.runs {
		tiers[s.Tier]++
		processed += s.Processed
		returned += s.Returned
	}
	return tiers, processed, returned
}
