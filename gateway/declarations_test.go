package gateway

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestDeclarationsForEveryServerEverythingTool asks, through a real MCP
// client, for the TypeScript declarations of every tool of the real
// server-everything: tool_info (brief and full), search hits and the `ts`
// field of __interfaces, and type-checks the backend's .d.ts with the
// pinned TypeScript compiler.
func TestDeclarationsForEveryServerEverythingTool(t *testing.T) {
	h := newHarness(t, nil)
	ctx := context.Background()
	var tools []string
	for _, e := range h.g.app.Catalog.Entries() {
		if e.Backend == "everything" {
			tools = append(tools, e.Tool)
		}
	}
	if len(tools) < 10 {
		t.Fatalf("server-everything has only %d tools: %v", len(tools), tools)
	}
	text, isErr := h.chain(t, map[string]any{"code": `return Object.fromEntries(Object.entries(__interfaces.everything).map(([k, v]) => [k, v.ts]))`})
	if isErr {
		t.Fatal(text)
	}
	for _, tool := range tools {
		call := func(detail string) string {
			res, err := h.cs.CallTool(ctx, &mcp.CallToolParams{Name: "tool_info", Arguments: map[string]any{"tool_name": "everything." + tool, "detail": detail}})
			if err != nil || res.IsError {
				t.Fatalf("tool_info %s: %v %+v", tool, err, res)
			}
			return res.Content[0].(*mcp.TextContent).Text
		}
		e, _ := h.g.app.Catalog.Lookup("everything." + tool)
		brief, full := call("brief"), call("full")
		prefix := ""
		for _, w := range strings.Split(e.JSTool, "_") {
			prefix += strings.ToUpper(w[:1]) + w[1:]
		}
		for _, want := range []string{"TypeScript:\n", prefix + "Input", e.JSName + "(args"} {
			if !strings.Contains(brief, want) || !strings.Contains(full, want) {
				t.Errorf("%s: tool_info lacks %q:\nbrief:\n%s\nfull:\n%s", tool, want, brief, full)
			}
		}
		if e.Def.OutputSchema != nil && !strings.Contains(full, "interface "+prefix+"Output {") {
			t.Errorf("%s: full tool_info lacks the output interface:\n%s", tool, full)
		}
		if !strings.Contains(text, prefix+"Input") {
			t.Errorf("%s: __interfaces ts lacks %sInput", tool, prefix)
		}
	}
	res, err := h.cs.CallTool(ctx, &mcp.CallToolParams{Name: "search_tools", Arguments: map[string]any{"query": "sum two numbers"}})
	if err != nil || !strings.Contains(res.Content[0].(*mcp.TextContent).Text, "everything.get_sum(args: { a: number; b: number }): Promise<") {
		t.Errorf("search hit lacks the signature line: %v %+v", err, res)
	}

	dts, ok := h.g.app.Catalog.TypeScript("everything")
	if !ok || strings.Count(dts, "\n  ") < len(tools) {
		t.Fatalf("TypeScript(everything):\n%s", dts)
	}
	tsc, err := filepath.Abs("../interop/node_modules/.bin/tsc")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(tsc); err != nil {
		t.Skipf("TypeScript compiler not installed (make deps): %v", err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "everything.d.ts"), []byte(dts), 0o644); err != nil {
		t.Fatal(err)
	}
	use := "async function use(): Promise<number> {\n  const w = await everything.get_structured_content({ location: \"Chicago\" });\n  const n: number = w.temperature;\n" +
		"  // @ts-expect-error: location must be one of the enum values\n  await everything.get_structured_content({ location: \"Paris\" });\n  return n;\n}\n"
	if err := os.WriteFile(filepath.Join(dir, "use.ts"), []byte(use), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(tsc, "--noEmit", "--strict", "--skipLibCheck", "--target", "es2022", "--lib", "es2022",
		filepath.Join(dir, "everything.d.ts"), filepath.Join(dir, "use.ts")).CombinedOutput()
	if err != nil {
		t.Fatalf("tsc: %v\n%s\n%s", err, out, dts)
	}
}
