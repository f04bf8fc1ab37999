package gateway

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/isogate/isogate/config"
)

// TestFirstCallsWithStartingAndDeadBackends: with an empty cache, the first
// call to a backend that is still starting (the real server-everything)
// waits for it and succeeds; a backend whose command does not exist fails
// with an error naming it and its cause; search_tools says it is down. All
// through an MCP client, right after Start.
func TestFirstCallsWithStartingAndDeadBackends(t *testing.T) {
	const missing = "/nonexistent/isogate-dead-backend"
	cfg := config.Default()
	cfg.Server.CacheDir = t.TempDir() // empty cache
	cfg.Sandbox.Isolation = config.IsolationThread
	cfg.Sandbox.Timeout = 30 * time.Second
	cfg.Sandbox.BackendWait = 30 * time.Second
	cfg.Backends = map[string]config.Backend{
		"everything": {Name: "everything", Transport: config.TransportStdio, Command: "node",
			Args: []string{everythingPath(t), "stdio"}, Timeout: 10 * time.Second, MaxConcurrentCalls: 8},
		"dead": {Name: "dead", Transport: config.TransportStdio, Command: missing, Timeout: 10 * time.Second, MaxConcurrentCalls: 8},
	}
	g, err := New(cfg, Options{Runner: testPool()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.Close() })
	if err := g.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	st, ct := mcp.NewInMemoryTransports()
	if _, err := g.Server().Connect(context.Background(), st, nil); err != nil {
		t.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "agent"}, nil).Connect(context.Background(), ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	call := func(tool string, args map[string]any) (string, bool) {
		t.Helper()
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: args})
		if err != nil {
			t.Fatal(err)
		}
		return res.Content[0].(*mcp.TextContent).Text, res.IsError
	}

	if text, isErr := call("call_tool_chain", map[string]any{"code": `return await everything.get_sum({a: 40, b: 2})`}); isErr || !strings.Contains(text, "42") {
		t.Fatalf("first call on an empty cache: %s", text)
	}
	text, isErr := call("call_tool_chain", map[string]any{"code": `return await dead.anything({})`})
	if !isErr || !strings.Contains(text, `backend "dead" is unavailable`) || !strings.Contains(text, missing) {
		t.Fatalf("call to a dead backend: %s", text)
	}
	text, _ = call("search_tools", map[string]any{"query": "sum"})
	if !strings.Contains(text, "everything.get-sum") || !strings.Contains(text, "Down (") || !strings.Contains(text, "dead") {
		t.Fatalf("search_tools does not report the dead backend:\n%s", text)
	}
	if strings.Contains(text, "Still connecting") {
		t.Fatalf("search_tools reports a connected backend as connecting:\n%s", text)
	}
}
