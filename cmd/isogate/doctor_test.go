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

// TestDoctorReportsTheChecker: with sandbox.typecheck on, `isogate doctor`
// loads the type checker, checks its trivial program with it and prints
// the checker's state: in process isolation its worker (PID, RSS, uptime),
// its heap, restarts, the code cache file (missed and written on a first
// start, hit on the next) and the checks by outcome; in thread isolation
// that it runs in the gateway's process.
func TestDoctorReportsTheChecker(t *testing.T) {
	dir := t.TempDir()
	cache := filepath.Join(dir, "cache")
	write := func(name, sandbox string) string {
		t.Helper()
		path := filepath.Join(dir, name)
		body := "server:\n  cache_dir: " + cache + "\nsandbox:\n" + sandbox + "backends: {}\n"
		if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	process := write("process.yaml", "  typecheck: strict\n")
	out, stderr, code := runBinary(t, "", "doctor", "--config", process)
	if code != 0 {
		t.Fatalf("exit %d:\n%s\n%s", code, out, stderr)
	}
	for _, want := range []string{
		"typecheck: strict, ready (worker process pid ",
		", restarts 0\n",
		"  code cache: " + filepath.Join(cache, "typecheck", "typescript-"),
		"hits 0, misses 1, rejected 0, invalid 0, written 1\n",
		"  checks: ok 1, refused 0, failed 0, timeout 0, skipped 0, cancelled 0 (mean ",
		"no problems found",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("doctor's report lacks %q:\n%s", want, out)
		}
	}

	out, stderr, code = runBinary(t, "", "doctor", "--config", process, "--json")
	if code != 0 {
		t.Fatalf("exit %d:\n%s\n%s", code, out, stderr)
	}
	var r struct {
		Sandbox struct {
			Typecheck struct {
				Mode, State, Where string
				Worker             struct {
					PID      int   `json:"pid"`
					RSSBytes int64 `json:"rss_bytes"`
				}
				HeapUsedBytes int64              `json:"heap_used_bytes"`
				CodeCache     struct{ Hits int } `json:"code_cache"`
				Checks        struct{ OK int }
			}
		}
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if tc := r.Sandbox.Typecheck; tc.Mode != "strict" || tc.State != "ready" || tc.Where != "worker" || tc.Worker.PID <= 0 ||
		tc.Worker.RSSBytes <= 0 || tc.HeapUsedBytes <= 0 || tc.CodeCache.Hits != 1 || tc.Checks.OK != 1 {
		t.Errorf("doctor --json: typecheck %+v; want strict, ready, a worker, its heap, the code cache hit, one check", tc)
	}

	thread := write("thread.yaml", "  isolation: thread\n  trusted_code: true\n  typecheck: warn\n")
	out, stderr, code = runBinary(t, "", "doctor", "--config", thread)
	if code != 0 || !strings.Contains(out, "typecheck: warn, ready (in the gateway's process), heap ") ||
		!strings.Contains(out, "  checks: ok 1,") {
		t.Errorf("thread isolation: exit %d:\n%s\n%s", code, out, stderr)
	}
}
