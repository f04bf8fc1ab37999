//go:build unix

package backend

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/isogate/isogate/config"
	"github.com/isogate/isogate/internal/testutil"
)

// everythingSpec returns a stdio spec for the pinned
// @modelcontextprotocol/server-everything installed in <repo>/examples by
// `npm ci --prefix examples`. Outside CI the test is skipped when it (or
// node) is missing; in CI (env CI set) that is a failure.
func everythingSpec(t *testing.T) Spec {
	t.Helper()
	missing := func(format string, args ...any) {
		t.Helper()
		if os.Getenv("CI") == "" {
			t.Skipf(format+" (run `npm ci --prefix examples`)", args...)
		}
		t.Fatalf(format, args...)
	}
	root, err := repoRoot()
	if err != nil {
		t.Fatal(err)
	}
	script := filepath.Join(root, "examples", "node_modules", "@modelcontextprotocol", "server-everything", "dist", "index.js")
	if _, err := os.Stat(script); err != nil {
		missing("server-everything not installed: %v", err)
	}
	node, err := exec.LookPath("node")
	if err != nil {
		missing("node not found: %v", err)
	}
	return Spec{Backend: config.Backend{Name: "everything", Transport: config.TransportStdio, Command: node, Args: []string{script, "stdio"}}}
}

// repoRoot walks up from the working directory to the module root.
func repoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if data, err := os.ReadFile(filepath.Join(dir, "go.mod")); err == nil &&
			strings.Contains(string(data), "module github.com/isogate/isogate\n") {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("module root (go.mod of github.com/isogate/isogate) not found")
		}
		dir = parent
	}
}

func TestServerEverything(t *testing.T) {
	t.Setenv("ISOGATE_SERVER__AUTH_TOKEN", "gateway-secret")
	t.Setenv("EVERYTHING_TEST_SECRET", "secret")
	spec := everythingSpec(t)
	spec.Env = map[string]string{"EVERYTHING_OWN": "mine"}
	m := startManager(t, Options{
		Specs:              []Spec{spec},
		RestartBackoffBase: 10 * time.Millisecond,
		StartWait:          30 * time.Second,
	})
	waitHealthy(t, m)

	names := toolNames(m.Tools()["everything"])
	t.Logf("server-everything tools: %v", names)
	if !slices.Contains(names, "get-sum") {
		t.Fatalf("get-sum not among %v", names)
	}
	ctx := context.Background()
	res, err := m.CallTool(ctx, "everything", "get-sum", map[string]any{"a": 2, "b": 3})
	if err != nil {
		t.Fatal(err)
	}
	if got := resultText(t, res); res.IsError || !strings.Contains(got, "5") {
		t.Fatalf("get-sum(2, 3) = %q (isError %v)", got, res.IsError)
	}

	// Crash it: the next call waits for the restart and succeeds.
	pid := statusOf(t, m, "everything").PID
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	testutil.Eventually(t, 20*time.Second, func() bool {
		return errors.Is(syscall.Kill(pid, 0), syscall.ESRCH)
	}, "the killed server to be reaped")
	res, err = m.CallTool(ctx, "everything", "get-sum", map[string]any{"a": 2, "b": 3})
	if err != nil {
		t.Fatalf("call after crash: %v", err)
	}
	if got := resultText(t, res); !strings.Contains(got, "5") {
		t.Fatalf("get-sum after restart = %q", got)
	}
	st := statusOf(t, m, "everything")
	if st.Restarts != 1 || st.PID == 0 || st.PID == pid || len(st.Stderr) == 0 {
		t.Fatalf("status after restart: %+v", st)
	}

	// get-env shows the backend's environment: the gateway's secrets are
	// not in it (the minimal base environment), its own env is.
	res, err = m.CallTool(ctx, "everything", "get-env", nil)
	if err != nil {
		t.Fatal(err)
	}
	var env map[string]string
	if err := json.Unmarshal([]byte(resultText(t, res)), &env); err != nil {
		t.Fatalf("get-env: %v", err)
	}
	if _, ok := env["ISOGATE_SERVER__AUTH_TOKEN"]; ok {
		t.Errorf("get-env shows the gateway's auth token")
	}
	if _, ok := env["EVERYTHING_TEST_SECRET"]; ok {
		t.Errorf("get-env shows a secret of the gateway's environment")
	}
	if env["EVERYTHING_OWN"] != "mine" || env["PATH"] == "" {
		t.Errorf("get-env misses the backend's own env or PATH: %v", env)
	}

	newPID := st.PID
	cctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	if err := m.Close(cctx); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(newPID, 0); !errors.Is(err, syscall.ESRCH) {
		t.Fatalf("server %d still exists after Close (kill -0: %v)", newPID, err)
	}
}
