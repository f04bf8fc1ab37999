package config

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestBackendOrderFollowsTheFile: the backends keep the order the file
// writes them in, in every format Load reads (YAML, JSON, TOML with tables,
// dotted keys or an inline table, a Claude-style mcpServers file, an isogate
// file importing one), not their names sorted; backends only the
// environment declares come after, by name. Issue 33 (1): the tie-break of
// a shared tool name is the first backend in configuration order.
func TestBackendOrderFollowsTheFile(t *testing.T) {
	files := map[string]string{
		"a.yaml": "backends:\n  zeta:\n    command: z\n  alpha:\n    command: a\n  mid:\n    command: m\n",
		"a.json": `{"backends": {"zeta": {"command": "z"}, "alpha": {"command": "a"}, "mid": {"command": "m"}}}`,
		"tables.toml": "[backends.zeta]\ncommand = \"z\"\n[backends.alpha]\ncommand = \"a\"\n[backends.alpha.env]\nX = \"1\"\n" +
			"[backends.mid]\ncommand = \"m\"\n",
		"dotted.toml": "[backends]\nzeta.command = \"z\"\nalpha.command = \"a\"\nmid.command = \"m\"\n",
		"inline.toml": "backends = {zeta = {command = \"z\"}, alpha = {command = \"a\"}, mid = {command = \"m\"}}\n",
		"claude.json": `{"mcpServers": {"zeta": {"command": "z"}, "alpha": {"command": "a"}, "mid": {"command": "m"}}}`,
		"claude.yaml": "mcpServers:\n  zeta:\n    command: z\n  alpha:\n    command: a\n  mid:\n    command: m\n",
		"import.yaml": "import: servers.json\nbackends:\n  mid:\n    command: m\n  zeta:\n    timeout: 5s\n",
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "servers.json"), []byte(`{"mcpServers": {"zeta": {"command": "z"}, "alpha": {"command": "a"}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	for name, body := range files {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(dir, name)
			if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
				t.Fatal(err)
			}
			cfg, err := Load(LoadOptions{Path: path, Environ: []string{"ISOGATE_BACKENDS__ENV__COMMAND=e"}})
			if err != nil {
				t.Fatal(err)
			}
			want := []string{"zeta", "alpha", "mid", "env"}
			if !slices.Equal(cfg.Order, want) {
				t.Errorf("Order = %v, want %v", cfg.Order, want)
			}
			var got []string
			for _, b := range cfg.EnabledBackends() {
				got = append(got, b.Name)
			}
			if !slices.Equal(got, want) {
				t.Errorf("EnabledBackends = %v, want %v", got, want)
			}
		})
	}
}

// TestMCPServersTransposedKey: in a Claude-style file too, "evn" gets a
// "did you mean" (issue 33, 6: "enviroment", "arg" and "comand" did, "evn"
// did not).
func TestMCPServersTransposedKey(t *testing.T) {
	path := filepath.Join(t.TempDir(), "claude.json")
	if err := os.WriteFile(path, []byte(`{"mcpServers": {"memory": {"command": "node", "evn": {"A": "b"}}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := Load(LoadOptions{Path: path, Environ: []string{}})
	if err == nil || !strings.Contains(err.Error(), `unknown key "mcpServers.memory.evn" (did you mean "mcpServers.memory.env"?)`) {
		t.Fatalf("error: %v", err)
	}
}
