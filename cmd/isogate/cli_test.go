package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestVersionFlag(t *testing.T) {
	for _, arg := range []string{"--version", "version"} {
		out, _, code := runBinary(t, "", arg)
		if code != 0 || !strings.HasPrefix(out, "isogate ") || !strings.Contains(out, "V8 ") {
			t.Fatalf("%s: exit %d, %q", arg, code, out)
		}
	}
}

func TestMissingConfigNamesThePath(t *testing.T) {
	// No --config and no default file.
	home := t.TempDir()
	cmd := exec.Command(binary, "tools")
	cmd.Env = append(os.Environ(), "HOME="+home, "XDG_CONFIG_HOME=")
	out, err := cmd.CombinedOutput()
	want := filepath.Join(home, ".config", "isogate", "isogate.yaml")
	if exit, ok := err.(*exec.ExitError); !ok || exit.ExitCode() != 2 || !strings.Contains(string(out), want) {
		t.Fatalf("default config missing: %v, %q (want the path %s)", err, out, want)
	}
	// An explicit --config that does not exist.
	missing := filepath.Join(t.TempDir(), "nope.yaml")
	_, stderr, code := runBinary(t, "", "backends", "--config", missing)
	if code != 2 || !strings.Contains(stderr, missing) {
		t.Fatalf("--config missing: exit %d, %q", code, stderr)
	}
}

// TestToolsAndExecOneShots: `tools` without a query lists every tool,
// a dead backend is reported, and neither `tools` nor `exec` ends with a
// warning.
func TestToolsAndExecOneShots(t *testing.T) {
	cfg := writeConfig(t, `  backend_wait: 20s
`)
	// Add a backend whose command does not exist.
	data, _ := os.ReadFile(cfg)
	data = []byte(strings.Replace(string(data), "backends:\n", "backends:\n  dead:\n    command: /nonexistent/isogate-cli-dead\n", 1))
	os.WriteFile(cfg, data, 0o600)

	out, stderr, code := runBinary(t, "", "tools", "--config", cfg, "--log-level", "warn")
	if code != 0 || !strings.Contains(out, "everything.get-sum — ") || !strings.Contains(out, "everything.echo — ") ||
		!strings.Contains(out, "Down (") || !strings.Contains(out, "dead") {
		t.Fatalf("tools: exit %d\n%s\nstderr:\n%s", code, out, stderr)
	}
	if strings.Contains(stderr, "list_changed") || strings.Contains(stderr, "context canceled") {
		t.Fatalf("tools ended with a warning:\n%s", stderr)
	}
	out, stderr, code = runBinary(t, "", "exec", "--config", cfg, "--log-level", "warn", "-e", "return await everything.get_sum({a: 2, b: 3})")
	if code != 0 || !strings.Contains(out, "5") {
		t.Fatalf("exec: exit %d, %q, stderr %q", code, out, stderr)
	}
	if strings.Contains(stderr, "list_changed") || strings.Contains(stderr, "context canceled") {
		t.Fatalf("exec ended with a warning:\n%s", stderr)
	}
}
