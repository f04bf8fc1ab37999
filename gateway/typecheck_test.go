package gateway

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/isogate/isogate/config"
	"github.com/isogate/isogate/internal/app"
	"github.com/isogate/isogate/internal/backend"
	"github.com/isogate/isogate/internal/typecheck"
)

type bumpArgs struct {
	ID string `json:"id" jsonschema:"the counter to bump"`
	By int    `json:"by,omitempty"`
}

// callLog is an in-memory backend's record of every call it receives, as
// its entry function writes each one.
type callLog struct {
	mu    sync.Mutex
	calls []string
}

func (l *callLog) got() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.calls...)
}

// serve is backend name offering tools (each taking bumpArgs), whose
// every call is logged as entry(tool, id).
func (l *callLog) serve(name string, entry func(tool, id string) string, tools ...string) backend.Spec {
	srv := mcp.NewServer(&mcp.Implementation{Name: name}, nil)
	for _, tool := range tools {
		mcp.AddTool(srv, &mcp.Tool{Name: tool, Description: tool + "s a record."},
			func(ctx context.Context, _ *mcp.CallToolRequest, in bumpArgs) (*mcp.CallToolResult, any, error) {
				l.mu.Lock()
				l.calls = append(l.calls, entry(tool, in.ID))
				l.mu.Unlock()
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: `{"ok": true}`}}}, nil, nil
			})
	}
	return backend.InMemory(name, srv)
}

// recorder is the backend counter with one tool, bump, recording the id
// of every call it receives.
type recorder struct{ callLog }

func (r *recorder) spec() backend.Spec {
	return r.serve("counter", func(_, id string) string { return id }, "bump")
}

// The programs, each wrong from the start, whose first calls used
// to run before the mistake failed.
var wrongPrograms = []struct{ name, code, hint string }{
	{"unknown parameter", "await counter.bump({id:'p1'}); await counter.bump({id:'p2'}); await counter.bump({ident:'p3'})",
		"line 1, column 83: `ident` is not a parameter of counter.bump; did you mean `id`?"},
	{"unknown tool", "await counter.bump({id:'r1'}); await counter.bumpp({id:'r2'})",
		"line 1, column 46: `bumpp` is not a tool of counter; did you mean `counter.bump`?"},
	{"wrong literal type", "await counter.bump({id:'w1'});\nawait counter.bump({id: 7})",
		"line 2, column 21: the value of `id` has the wrong type for counter.bump"},
	{"misspelt backend", "await counter.bump({id:'m1'});\nawait countr.bump({id:'m2'})",
		"line 2, column 7: `countr` is not defined: no backend has that name; did you mean `counter`?"},
}

func typecheckGateway(t *testing.T, mode string) (*mcp.ClientSession, *recorder) {
	t.Helper()
	cfg := config.Default()
	cfg.Server.CacheDir = t.TempDir()
	cfg.Sandbox.Isolation = config.IsolationThread
	cfg.Sandbox.TrustedCode = true
	cfg.Sandbox.Typecheck = mode
	cfg.Sandbox.TypecheckTimeout = time.Minute // a loaded machine must not turn a check into "unchecked"
	rec := &recorder{}
	g := startHealthy(t, cfg, app.Options{Runner: testPool(), ExtraSpecs: []backend.Spec{rec.spec()}})
	if err := typecheck.Shared().Warm(t.Context()); err != nil {
		t.Fatal(err)
	}
	return connect(t, g, nil), rec
}

// In strict mode a program with a certain mistake in a tool call is refused
// before its first call, with TYPECHECK_FAILED and the fix.
func TestTypecheckStrictRefusesBeforeAnyCall(t *testing.T) {
	cs, rec := typecheckGateway(t, "strict")
	for _, p := range wrongPrograms {
		t.Run(p.name, func(t *testing.T) {
			text, isErr, _ := callText(t, cs, "call_tool_chain", map[string]any{"code": p.code})
			if !isErr || !strings.HasPrefix(text, "TYPECHECK_FAILED") || !strings.Contains(text, p.hint) {
				t.Errorf("got (error %v):\n%s\nwant TYPECHECK_FAILED with %q", isErr, text, p.hint)
			}
		})
	}
	if calls := rec.got(); len(calls) != 0 {
		t.Fatalf("the backend received %v; want no call", calls)
	}
	text, isErr, _ := callText(t, cs, "call_tool_chain", map[string]any{"code": "await counter.bump({id:'ok1'}); return await counter.bump({id:'ok2', by: 2})"})
	if isErr || !strings.Contains(text, "ok") {
		t.Fatalf("a valid program: %s", text)
	}
	if calls := rec.got(); strings.Join(calls, ",") != "ok1,ok2" {
		t.Fatalf("calls = %v", calls)
	}
}

// In warn mode the same programs run as before, the diagnostics attached.
func TestTypecheckWarnRunsWithDiagnostics(t *testing.T) {
	cs, rec := typecheckGateway(t, "warn")
	text, _, _ := callText(t, cs, "call_tool_chain", map[string]any{"code": wrongPrograms[0].code})
	if !strings.Contains(text, "[notice] typecheck: "+wrongPrograms[0].hint) {
		t.Errorf("no diagnostic attached:\n%s", text)
	}
	if calls := rec.got(); strings.Join(calls, ",") != "p1,p2" {
		t.Fatalf("calls = %v; want p1,p2 (the program ran as written)", calls)
	}
}
