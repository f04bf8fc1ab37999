package gateway

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/isogate/isogate/config"
	"github.com/isogate/isogate/internal/app"
	"github.com/isogate/isogate/internal/backend"
	"github.com/isogate/isogate/v8sandbox"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// npmServerPath is the entry point of an example npm MCP server
// (examples/node_modules), or skips the test when it is not installed.
func npmServerPath(t testing.TB, pkg string) string {
	t.Helper()
	p, _ := filepath.Abs("../examples/node_modules/@modelcontextprotocol/" + pkg + "/dist/index.js")
	if _, err := os.Stat(p); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("%s is not installed (make deps): %v", pkg, err)
		}
		t.Skipf("%s is not installed; run make deps", pkg)
	}
	return p
}

// memoryBackend is the official server-memory, storing its graph in file.
func memoryBackend(t testing.TB, file string) config.Backend {
	return config.Backend{Name: "memory", Transport: config.TransportStdio, Command: "node",
		Args: []string{npmServerPath(t, "server-memory")}, Env: map[string]string{"MEMORY_FILE_PATH": file},
		Timeout: 10 * time.Second, MaxConcurrentCalls: 8}
}

// TestUnawaitedWriteCompletes is issue 23's first mistake, through a real
// MCP client and the real server-memory, in both isolation modes: writes a
// program forgot to await still happen, and the result says so.
func TestUnawaitedWriteCompletes(t *testing.T) {
	isolations(t, func(t *testing.T, mode config.Isolation) {
		t.Parallel()
		file := filepath.Join(t.TempDir(), "memory.jsonl")
		cfg := config.Default()
		cfg.Server.CacheDir = t.TempDir()
		cfg.Sandbox.Isolation = mode
		cfg.Backends = map[string]config.Backend{"memory": memoryBackend(t, file)}
		var runner v8sandbox.Runner = testPool()
		if mode == config.IsolationProcess {
			runner = nil
		}
		cs := connect(t, startHealthy(t, cfg, app.Options{Runner: runner}), nil)

		text, isErr, _ := callText(t, cs, "call_tool_chain", map[string]any{"code": `
memory.create_entities({entities: [{name: "alpha", entityType: "file", observations: ["a.go"]}]})
  .then(() => memory.create_entities({entities: [{name: "beta", entityType: "file", observations: ["b.go"]}]}));
return "done"`}) // one after the other: server-memory loses one of two concurrent writes
		if isErr || !strings.HasPrefix(text, "done\n") ||
			!strings.Contains(text, "2 calls to memory.create_entities were not awaited; they completed") {
			t.Fatalf("error=%v:\n%s", isErr, text)
		}
		text, isErr, _ = callText(t, cs, "call_tool_chain", map[string]any{"code": `
const g = await memory.read_graph({});
return g.entities.map((e) => e.name).sort()`})
		if isErr || !strings.Contains(text, `"alpha"`) || !strings.Contains(text, `"beta"`) {
			t.Fatalf("the un-awaited writes are missing: %s", text)
		}

		text, _, _ = callText(t, cs, "call_tool_chain", map[string]any{"code": "const r = memory.read_graph({});\nreturn r.entities"})
		if !strings.Contains(text, "missing await? The program read `.entities` from the Promise that memory.read_graph returned") {
			t.Fatalf("no missing-await hint:\n%s", text)
		}
	})
}

// TestDiscoveryWaitsForStartingBackends: search_tools, tool_info and
// list_tools_meta asked while a backend is still starting (no cached tool
// list) wait for it and find its tools; one that does not finish starting
// within the wait is named, never a bare "No tools match".
func TestDiscoveryWaitsForStartingBackends(t *testing.T) {
	cfg := config.Default()
	cfg.Server.CacheDir = t.TempDir() // empty: nothing is known before the backend connects
	cfg.Backends = map[string]config.Backend{
		// A backend that takes a second to start, as npx ones do.
		"everything": {Name: "everything", Transport: config.TransportStdio, Command: "sh",
			Args: []string{"-c", `sleep 1; exec node "$0" stdio`, everythingPath(t)}, Timeout: 30 * time.Second, MaxConcurrentCalls: 8},
	}
	cs := connect(t, startGateway(t, cfg, app.Options{Runner: testPool()}), nil)
	text, isErr, _ := callText(t, cs, "search_tools", map[string]any{"query": "add two numbers sum"})
	if isErr || !strings.Contains(text, "everything.get-sum") || strings.Contains(text, "No tools match") {
		t.Fatalf("search during start-up:\n%s", text)
	}

	cfg = config.Default()
	cfg.Server.CacheDir = t.TempDir()
	cfg.Backends = map[string]config.Backend{
		// Never answers: still starting whenever asked.
		"mute": {Name: "mute", Transport: config.TransportStdio, Command: "sh", Args: []string{"-c", "exec sleep 600"},
			Timeout: 60 * time.Second, MaxConcurrentCalls: 8},
	}
	cs = connect(t, startGateway(t, cfg, app.Options{Runner: testPool(), StartWait: 200 * time.Millisecond}), nil)
	for tool, args := range map[string]map[string]any{
		"search_tools":    {"query": "anything"},
		"tool_info":       {"tool_name": "mute.something"},
		"list_tools_meta": {},
	} {
		text, _, _ := callText(t, cs, tool, args)
		if !strings.Contains(text, "Backends still starting after waiting for them: mute.") || !strings.Contains(text, "retry") {
			t.Errorf("%s does not say mute is still starting:\n%s", tool, text)
		}
	}
}

// TestLargeResultIsStoredAndFetchable: a 5 MB result (over the former
// 4 MiB hard limit) comes back truncated with its resource URI and a
// read_result hint, and read_result returns its last bytes.
func TestLargeResultIsStoredAndFetchable(t *testing.T) {
	cfg := config.Default()
	cfg.Server.CacheDir = t.TempDir()
	cs := connect(t, startGateway(t, cfg, app.Options{Runner: testPool()}), nil)
	text, isErr, _ := callText(t, cs, "call_tool_chain", map[string]any{"code": `return "x".repeat(5_000_000) + "THE-END"`})
	if isErr {
		t.Fatalf("a 5 MB result failed:\n%.2000s", text)
	}
	m := regexp.MustCompile(`isogate://result/[A-Za-z0-9_-]+`).FindString(text)
	if m == "" || !strings.Contains(text, "read_result") || len(text) > 300_000 {
		t.Fatalf("no stored reference or read_result hint (%d bytes):\n%.600s…%s", len(text), text, text[max(0, len(text)-600):])
	}
	page, isErr, _ := callText(t, cs, "read_result", map[string]any{"uri": m, "offset": 5_000_000 - 10})
	if isErr || !strings.HasPrefix(page, "xxxxxxxxxxTHE-END") {
		t.Fatalf("read_result of the tail: %q", page)
	}
}

// TestMetaToolListFitsContextBudget: the default meta-tool list, as the
// JSON-RPC message a client receives for tools/list, stays within 3 700
// bytes: every client loads it into its context. Issue 23 set 3 000 (the
// list was 2 811 bytes); saved programs' save_program and programs (issue
// 45) take 889 more, down from 1 354 when first added: shorter words, no
// additionalProperties (unknown properties are ignored anyway). What is
// left says what a model needs to call them right.
func TestMetaToolListFitsContextBudget(t *testing.T) {
	cfg := config.Default()
	cfg.Server.CacheDir = t.TempDir()
	cs := connect(t, startGateway(t, cfg, app.Options{Runner: testPool()}), nil)
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	msg, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "result": res})
	var names []string
	for _, tl := range res.Tools {
		names = append(names, tl.Name)
	}
	if len(msg) > 3700 {
		t.Fatalf("tools/list is %d bytes, over the 3 700-byte budget: %v", len(msg), names)
	}
	if slices.Contains(names, "run_code") || !slices.Contains(names, "call_tool_chain") {
		t.Fatalf("default tools: %v", names)
	}
	t.Logf("tools/list: %d bytes, %v", len(msg), names)
}

// TestStatsCountBytesKeptOutOfContext: isogate://stats counts what the
// run's tool calls received from backends against what the agent got, so
// a run that reads 50 KB and returns a count shows its reduction.
func TestStatsCountBytesKeptOutOfContext(t *testing.T) {
	big := mcp.NewServer(&mcp.Implementation{Name: "big"}, nil)
	mcp.AddTool(big, &mcp.Tool{Name: "dump", Description: "Returns 50 KB of text."},
		func(ctx context.Context, _ *mcp.CallToolRequest, in map[string]any) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: strings.Repeat("line of text\n", 4000)}}}, nil, nil
		})
	cfg := config.Default()
	cfg.Server.CacheDir = t.TempDir()
	g := startHealthy(t, cfg, app.Options{Runner: testPool(), ExtraSpecs: []backend.Spec{backend.InMemory("big", big)}})
	cs := connect(t, g, nil)
	text, isErr, _ := callText(t, cs, "call_tool_chain", map[string]any{"code": "const t = await big.dump({});\nreturn t.split(\"\\n\").length"})
	if isErr || text != "4001" {
		t.Fatalf("run: %s", text)
	}
	res, err := cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: "isogate://stats"})
	if err != nil {
		t.Fatal(err)
	}
	var s struct {
		Received int64   `json:"bytes_received"`
		Returned int64   `json:"bytes_returned"`
		KeptOut  int64   `json:"bytes_kept_out"`
		Pct      float64 `json:"reduction_pct"`
	}
	if err := json.Unmarshal([]byte(res.Contents[0].Text), &s); err != nil {
		t.Fatal(err)
	}
	if s.Received < 52000 || s.Returned <= 0 || s.Returned > 200 || s.KeptOut != s.Received-s.Returned || s.Pct < 99 {
		t.Fatalf("stats: %+v\n%s", s, res.Contents[0].Text)
	}
}
