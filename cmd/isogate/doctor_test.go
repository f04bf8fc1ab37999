package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDoctor: `isogate doctor` runs a program in a confined worker and
// reports every confinement layer, the V8 version and each backend; a
// backend that cannot start is a problem (exit 1, named in the report).
func TestDoctor(t *testing.T) {
	example, _ := filepath.Abs("../../examples/isogate.yaml")
	if _, err := os.Stat(filepath.Join(filepath.Dir(example), "node_modules/@modelcontextprotocol/server-everything")); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal(err)
		}
		t.Skipf("not installed (make deps): %v", err)
	}
	t.Setenv("ISOGATE_SERVER__CACHE_DIR", t.TempDir())
	out, stderr, code := runBinary(t, "", "doctor", "--config", example, "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s\n%s", code, out, stderr)
	}
	var r struct {
		Sandbox struct {
			Isolation   string `json:"isolation"`
			V8Version   string `json:"v8_version"`
			Confinement struct {
				Mode   string `json:"mode"`
				Layers []struct{ Name, Level string }
			} `json:"confinement"`
		} `json:"sandbox"`
		SandboxRun string `json:"sandbox_run"`
		Backends   []struct {
			Name  string `json:"name"`
			State string `json:"state"`
		} `json:"backends"`
		Problems []string `json:"problems"`
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if r.Sandbox.Isolation != "process" || !strings.HasPrefix(r.Sandbox.V8Version, "10.") || r.SandboxRun != "ok" {
		t.Errorf("sandbox: %+v, run %q", r.Sandbox, r.SandboxRun)
	}
	layers := map[string]string{}
	for _, l := range r.Sandbox.Confinement.Layers {
		layers[l.Name] = l.Level
	}
	for _, name := range []string{"namespaces", "landlock", "seccomp", "capabilities", "rlimits", "threads"} {
		if layers[name] == "" {
			t.Errorf("confinement layer %s not reported: %v", name, layers)
		}
	}
	if len(r.Backends) != 2 || len(r.Problems) != 0 {
		t.Errorf("backends %+v, problems %q", r.Backends, r.Problems)
	}

	// A backend that cannot start.
	bad := filepath.Join(t.TempDir(), "bad.yaml")
	if err := os.WriteFile(bad, []byte("backends:\n  ghost:\n    command: /nonexistent/ghost-server\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	out, _, code = runBinary(t, "", "doctor", "--config", bad, "--wait", "3s")
	if code != 1 || !strings.Contains(out, "backend ghost is") || !strings.Contains(out, "problem(s)") {
		t.Errorf("exit %d, want 1 naming the ghost backend:\n%s", code, out)
	}
}
