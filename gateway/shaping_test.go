package gateway

import (
	"context"
	"log/slog"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/isogate/isogate/config"
	"github.com/isogate/isogate/internal/app"
	"github.com/isogate/isogate/internal/testutil"
)

// TestShapingSearchAndLogsThroughAClient: through a real MCP client and the
// real server-everything, the intent filter works on a plain-text result
// and names the full output, consecutive ids are written as ranges, brief
// search hits carry the ready-to-paste call, and the log has one INFO line
// per run and per backend tool call.
func TestShapingSearchAndLogsThroughAClient(t *testing.T) {
	logs := &testutil.Buffer{}
	cfg := config.Default()
	cfg.Server.CacheDir = t.TempDir()
	cfg.Sandbox.Isolation = config.IsolationThread
	cfg.Sandbox.TrustedCode = true
	cfg.Backends = map[string]config.Backend{"everything": {Name: "everything", Transport: config.TransportStdio, Command: "node",
		Args: []string{everythingPath(t), "stdio"}, Timeout: 10 * time.Second, MaxConcurrentCalls: 8}}
	cs := connect(t, startGateway(t, cfg, app.Options{Runner: testPool(), Logger: slog.New(slog.NewTextHandler(logs, nil))}), nil)
	call := func(tool string, args map[string]any) string {
		t.Helper()
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: args})
		if err != nil {
			t.Fatal(err)
		}
		text := res.Content[0].(*mcp.TextContent).Text
		if res.IsError {
			t.Fatalf("%s failed: %s", tool, text)
		}
		return text
	}

	// Intent on plain text: a long echoed text keeps the lines that
	// mention the intent, and names where the whole text is.
	text := call("call_tool_chain", map[string]any{"intent": "red fox", "code": `
		const lines = Array.from({length: 400}, (_, i) => i % 50 === 7 ? "line " + i + " saw the red fox" : "line " + i + " filler about nothing");
		const echoed = await everything.echo({message: lines.join("\n")});
		return echoed`})
	if !strings.Contains(text, "line 357 saw the red fox") || strings.Contains(text, "line 100 filler") || !resultURIRE.MatchString(text) {
		t.Fatalf("intent filter on text:\n%.2000s", text)
	}

	// Consecutive ids are written as ranges.
	text = call("call_tool_chain", map[string]any{"code": `return Array.from({length: 300}, (_, i) => ({id: i + 1, title: "issue " + (i + 1), body: "x".repeat(60)}))`})
	if !regexp.MustCompile(`\b\d+-300\b`).MatchString(text) || strings.Contains(text, "297, 298") || !resultURIRE.MatchString(text) {
		t.Fatalf("id ranges:\n%.2000s", text)
	}

	// Brief search hits (the default) include the call to paste.
	if text = call("search_tools", map[string]any{"query": "add two numbers"}); !strings.Contains(text, "await everything.get_sum({") {
		t.Fatalf("brief search hit without its call:\n%s", text)
	}

	call("call_tool_chain", map[string]any{"code": `const r = await everything.get_sum({a: 1, b: 2}); return [r, 5]`})
	log := logs.String()
	for _, want := range []string{`msg="backend tool call" backend=everything tool=get-sum`, `msg=call_tool_chain tier=v8`} {
		if !strings.Contains(log, want) {
			t.Fatalf("no INFO line %q in the log:\n%s", want, log)
		}
	}
	if strings.Contains(log, "level=DEBUG") {
		t.Fatal("DEBUG lines at the default level")
	}
}
