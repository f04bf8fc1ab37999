package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestSurfaceWithTypeScriptSDK serves the real server-everything over HTTP
// with passthrough and runs interop/surface.mjs: the official TypeScript SDK
// client lists meta and passthrough tools (its zod schemas accept them),
// calls a passthrough tool by its own name (server.tool_names auto) (and its structuredContent passes the output
// schema check), is refused a denied one, and lists and gets a backend
// prompt and lists and reads a backend resource.
func TestSurfaceWithTypeScriptSDK(t *testing.T) {
	interop, _ := filepath.Abs("../../interop")
	if _, err := os.Stat(filepath.Join(interop, "node_modules/@modelcontextprotocol/sdk")); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal(err)
		}
		t.Skipf("TypeScript SDK not installed (make deps): %v", err)
	}
	// server.expose stays meta: the client asks for both. run_code is off:
	// its output schema's "result": true is rejected by this client (a
	// meta-tool matter, not a passthrough one).
	cfg := writeConfig(t, "run_code:\n  enabled: false\n")
	data, _ := os.ReadFile(cfg)
	deny := strings.Replace(string(data), "    tags: [demo]\n", "    tags: [demo]\n    tools:\n      deny: [get-env]\n", 1)
	if err := os.WriteFile(cfg, []byte(deny), 0o600); err != nil {
		t.Fatal(err)
	}
	url := startHTTP(t, cfg)
	cmd := exec.Command("node", "surface.mjs", url+"?expose=both")
	cmd.Dir = interop
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("surface.mjs: %v\n%s", err, out)
	}
	var got struct {
		Tools      []string
		Sum        []map[string]any
		Structured map[string]any
		Denied     map[string]any
		Prompts    []string
		Prompt     struct{ Messages int }
		Resources  []string
		Read       struct{ Contents int }
		Templates  []string
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	for _, want := range []string{"search_tools", "call_tool_chain", "echo", "get-sum"} {
		if !slices.Contains(got.Tools, want) {
			t.Errorf("tools/list lacks %s: %v", want, got.Tools)
		}
	}
	if slices.Contains(got.Tools, "get-env") || slices.Contains(got.Tools, "everything__get-env") {
		t.Error("denied get-env listed")
	}
	if len(got.Sum) == 0 || !strings.Contains(got.Sum[0]["text"].(string), "42") {
		t.Errorf("get-sum: %v", got.Sum)
	}
	if got.Structured["temperature"] == nil {
		t.Errorf("structuredContent: %v", got.Structured)
	}
	if got.Denied["error"] == nil && got.Denied["isError"] != true {
		t.Errorf("denied call was not refused: %v", got.Denied)
	}
	if len(got.Prompts) == 0 || got.Prompt.Messages == 0 {
		t.Errorf("prompts: %v, get returned %d messages", got.Prompts, got.Prompt.Messages)
	}
	if !slices.Contains(got.Resources, "isogate://backends") || got.Read.Contents == 0 {
		t.Errorf("resources: %v, read returned %d contents", got.Resources, got.Read.Contents)
	}
}
