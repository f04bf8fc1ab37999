package gateway

import (
	"context"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/isogate/isogate/config"
	"github.com/isogate/isogate/internal/app"
)

// cancelledTasks is a log handler that reports the status the backend gave
// each task the gateway cancelled ("backend task cancelled: its caller gave
// up", see backend.cancelTask).
type cancelledTasks struct{ status chan string }

func (h cancelledTasks) Enabled(context.Context, slog.Level) bool { return true }
func (h cancelledTasks) WithAttrs([]slog.Attr) slog.Handler       { return h }
func (h cancelledTasks) WithGroup(string) slog.Handler            { return h }
func (h cancelledTasks) Handle(_ context.Context, r slog.Record) error {
	if r.Message != "backend task cancelled: its caller gave up" {
		return nil
	}
	r.Attrs(func(a slog.Attr) bool {
		if a.Key == "status" {
			h.status <- a.Value.String()
		}
		return true
	})
	return nil
}

// awaitProgress reads progress until a message under token that match
// accepts, failing when none comes within 20 s; a message under a token
// other than token and late (the earlier calls' tokens, which may still
// be arriving) is an error.
func awaitProgress(t *testing.T, progress <-chan *mcp.ProgressNotificationParams, token any, late []any, match func(*mcp.ProgressNotificationParams) bool) {
	t.Helper()
	timeout := time.After(20 * time.Second)
	for {
		select {
		case p := <-progress:
			switch {
			case p.ProgressToken == token && match(p):
				return
			case p.ProgressToken != token && !slices.Contains(late, p.ProgressToken):
				t.Errorf("progress under token %v (want %v)", p.ProgressToken, token)
			}
		case <-timeout:
			t.Fatalf("no status message reached the client as progress under %v", token)
		}
	}
}

// TestTaskRequiredToolThroughTheGateway: server-everything's
// simulate-research-query (execution.taskSupport "required": a plain
// tools/call is refused with -32601) works through isogate for a client
// that knows nothing of tasks: a plain passthrough call returns the
// completed report (naming no task in its _meta: the client made none),
// with the task's status messages as progress under the client's token; a program awaits it as an ordinary function; and a
// client that cancels its call midway has the backend's task cancelled.
func TestTaskRequiredToolThroughTheGateway(t *testing.T) {
	cfg := config.Default()
	cfg.Server.CacheDir = t.TempDir()
	cfg.Server.Expose = config.ExposeBoth
	cfg.Sandbox.Timeout = 30 * time.Second
	cfg.Backends = map[string]config.Backend{"everything": {
		Name: "everything", Transport: config.TransportStdio, Command: "node",
		Args: []string{everythingPath(t), "stdio"}, Timeout: 30 * time.Second,
	}}
	cancelled := cancelledTasks{status: make(chan string, 10)}
	g := startHealthy(t, cfg, app.Options{Runner: testPool(), Logger: slog.New(cancelled)})
	progress := make(chan *mcp.ProgressNotificationParams, 100)
	cs := connect(t, g, &mcp.ClientOptions{ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
		progress <- req.Params
	}})
	ctx := context.Background()

	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "simulate-research-query",
		Arguments: map[string]any{"topic": "gateways"}, Meta: mcp.Meta{"progressToken": "p1"}})
	if err != nil {
		t.Fatal(err)
	}
	if text := res.Content[0].(*mcp.TextContent).Text; res.IsError || !strings.Contains(text, "# Research Report: gateways") {
		t.Fatalf("passthrough call (isError %v): %.300s", res.IsError, text)
	}
	// A plain call made no task: the backend's task, which the gateway's
	// tasks/get does not know, is not named in its _meta (issue 43).
	if rt, ok := res.Meta["io.modelcontextprotocol/related-task"]; ok {
		t.Errorf("the plain call's result names the backend's task %v", rt)
	}
	// Progress may reach the client's handler after the result: wait for
	// a status message rather than look at what came so far.
	awaitProgress(t, progress, "p1", nil, func(p *mcp.ProgressNotificationParams) bool {
		return strings.HasSuffix(p.Message, "...")
	})

	// In a program: the task's status messages are the run's progress.
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "call_tool_chain", Meta: mcp.Meta{"progressToken": "run"},
		Arguments: map[string]any{"code": `const r = await everything.simulate_research_query({topic: "programs"}); return r`}})
	if err != nil {
		t.Fatal(err)
	}
	if text := res.Content[0].(*mcp.TextContent).Text; res.IsError || !strings.Contains(text, "Research Report: programs") {
		t.Fatalf("program (isError %v): %.300s", res.IsError, text)
	}
	awaitProgress(t, progress, "run", []any{"p1"}, func(p *mcp.ProgressNotificationParams) bool {
		return strings.HasPrefix(p.Message, "everything: ") && strings.HasSuffix(p.Message, "...")
	})

	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	errc := make(chan error, 1)
	go func() {
		_, err := cs.CallTool(cctx, &mcp.CallToolParams{Name: "simulate-research-query",
			Arguments: map[string]any{"topic": "cancelled"}, Meta: mcp.Meta{"progressToken": "p2"}})
		errc <- err
	}()
	for created := false; !created; {
		select {
		case p := <-progress:
			created = p.ProgressToken == "p2" // the task exists on the backend
		case <-time.After(20 * time.Second):
			t.Fatal("no progress for the call to cancel")
		}
	}
	cancel()
	if err := <-errc; err == nil {
		t.Fatal("the cancelled call returned no error")
	}
	select {
	case st := <-cancelled.status:
		if st != "cancelled" {
			t.Fatalf("after tasks/cancel the backend's task is %q", st)
		}
	case <-time.After(20 * time.Second): // the task itself would end in ~4 s
		t.Fatal("the backend's task was not cancelled")
	}
}
