package gateway

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/isogate/isogate/config"
	"github.com/isogate/isogate/internal/app"
	"github.com/isogate/isogate/v8sandbox"
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
		if isErr || !strings.Contains(text, `"done"`) ||
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
