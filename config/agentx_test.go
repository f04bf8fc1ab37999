package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestMCPServersStrictEntries: a typo in an mcpServers entry is refused
// with a "did you mean", keys other clients write harmlessly are not.
func TestMCPServersStrictEntries(t *testing.T) {
	path := writeConfig(t, "claude.json", `{"mcpServers": {"mem": {"command": "node", "enviroment": {"A": "1"}, "autoApprove": []}}}`)
	_, err := Load(LoadOptions{Path: path, Environ: testEnv(t)})
	wantProblem(t, err, "mcpServers.mem.enviroment", `unknown key "mcpServers.mem.enviroment" (did you mean "mcpServers.mem.env"?)`)
	if n := len(problemsOf(t, err)); n != 1 {
		t.Errorf("%d problems, want 1 (autoApprove is accepted): %v", n, err)
	}

	// Combining points at import.
	path = writeConfig(t, "claude.json", `{"mcpServers": {}, "sandbox": {"timeout": "5s"}}`)
	_, err = Load(LoadOptions{Path: path, Environ: testEnv(t)})
	wantProblem(t, err, "sandbox", "`import: <this file>`")
}

// TestImportMCPServers: an isogate file imports a Claude-style file's
// servers and lays its own backend settings over them.
func TestImportMCPServers(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "claude.json"), []byte(`{"mcpServers": {
  "memory": {"command": "node", "args": ["memory.js"], "env": {"MEMORY_FILE_PATH": "/tmp/m.jsonl"}},
  "fs": {"command": "node", "args": ["fs.js"]}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "isogate.yaml")
	if err := os.WriteFile(path, []byte("import: claude.json\nbackends:\n  memory:\n    timeout: 20s\n  extra:\n    command: x\nsandbox:\n  timeout: 7s\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := Load(LoadOptions{Path: path, Environ: testEnv(t)})
	if err != nil {
		t.Fatal(err)
	}
	m := cfg.Backends["memory"]
	if m.Command != "node" || m.Args[0] != "memory.js" || m.Env["MEMORY_FILE_PATH"] != "/tmp/m.jsonl" || m.Timeout.String() != "20s" {
		t.Errorf("memory = %+v", m)
	}
	if _, ok := cfg.Backends["fs"]; !ok || cfg.Backends["extra"].Command != "x" || cfg.Sandbox.Timeout.String() != "7s" {
		t.Errorf("backends %v, sandbox timeout %v", cfg.BackendNames(), cfg.Sandbox.Timeout)
	}
	if cfg.Import != filepath.Join(dir, "claude.json") {
		t.Errorf("Import = %q", cfg.Import)
	}

	// A problem in the imported file names it.
	if err := os.WriteFile(filepath.Join(dir, "claude.json"), []byte(`{"mcpServers": {"m": {"comand": "node"}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err = Load(LoadOptions{Path: path, Environ: testEnv(t)})
	wantProblem(t, err, "mcpServers.m.comand", `(did you mean "mcpServers.m.command"?)`)
	wantProblem(t, err, "mcpServers.m.comand", "claude.json, imported")
}

// TestSyntaxErrorPositions: YAML errors name the line that breaks the
// structure, JSON errors their line and column.
func TestSyntaxErrorPositions(t *testing.T) {
	for _, c := range []struct{ name, content, want string }{
		{"isogate.yaml", "server:\n  http: 127.0.0.1:8787\nbackends:\n  memory:\n    command: node\n   args: [x]\n", `line 6, column 4: the document stops parsing here (check this line's indentation, brackets and quotes): "args: [x]"`},
		{"isogate.yaml", "backends:\n  a:\n    args: [x,\n      y]\n    command: node\n  b: {command: c\n", `line 6, column 3: the document stops parsing here (check this line's indentation, brackets and quotes): "b: {command: c"`},
		{"claude.json", "{\"mcpServers\": {\n  \"m\": {\"command\": \"node\",\n   \"args\": [\"x\"],,\n}}}\n", "line 3, column 18: invalid character ','"},
	} {
		_, err := Load(LoadOptions{Path: writeConfig(t, c.name, c.content), Environ: testEnv(t)})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v, want %q", c.content, err, c.want)
		}
	}
}

// TestBackendDescription: backends.<name>.description is read from an
// isogate file and from an mcpServers entry's "description" (no longer
// ignored); past MaxBackendDescription bytes it is refused.
func TestBackendDescription(t *testing.T) {
	path := writeConfig(t, "claude.json", `{"mcpServers": {"photos": {"command": "node", "description": "The photo archive"}}}`)
	cfg, err := Load(LoadOptions{Path: path, Environ: testEnv(t)})
	if err != nil || cfg.Backends["photos"].Description != "The photo archive" {
		t.Fatalf("mcpServers description: %v, %+v", err, cfg)
	}
	path = writeConfig(t, "isogate.yaml", "backends:\n  fs:\n    command: node\n    description: "+strings.Repeat("x", MaxBackendDescription+1)+"\n")
	_, err = Load(LoadOptions{Path: path, Environ: testEnv(t)})
	wantProblem(t, err, "backends.fs.description", "at most 500 bytes")
}
