//go:build unix

package backend

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/isogate/isogate/config"
	"github.com/isogate/isogate/internal/testutil"
	"github.com/isogate/isogate/v8sandbox"
)

// processGone reports whether pid no longer runs. A zombie counts as gone:
// orphaned grandchildren are reaped by init, which in some containers never
// happens.
func processGone(pid int) bool {
	if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
		return true
	}
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return errors.Is(err, os.ErrNotExist)
	}
	if i := bytes.LastIndexByte(data, ')'); i >= 0 {
		if f := strings.Fields(string(data[i+1:])); len(f) > 0 {
			return f[0] == "Z" || f[0] == "X"
		}
	}
	return false
}

func TestStdioEnvCwdAndStderrRing(t *testing.T) {
	t.Setenv("ISOGATE_INHERITED", "from-gateway")
	dir := t.TempDir()
	spec := helperSpec(t, "helper", map[string]string{
		"ISOGATE_HELPER_VAR":          "from-spec",
		"ISOGATE_HELPER_STDERR_LINES": "150",
	})
	spec.Cwd = dir
	m := startManager(t, Options{Specs: []Spec{spec}})
	waitHealthy(t, m)

	res, err := m.CallTool(context.Background(), "helper", "info", nil)
	if err != nil {
		t.Fatal(err)
	}
	var info helperInfo
	if err := json.Unmarshal([]byte(resultText(t, res)), &info); err != nil {
		t.Fatal(err)
	}
	wantDir, _ := filepath.EvalSymlinks(dir)
	gotDir, _ := filepath.EvalSymlinks(info.Cwd)
	st := statusOf(t, m, "helper")
	if info.Var != "from-spec" || info.Inherited != "" || gotDir != wantDir || info.PID != st.PID || info.PPID != os.Getpid() {
		t.Fatalf("child saw %+v (status pid %d, cwd want %s)", info, st.PID, wantDir)
	}

	testutil.Eventually(t, 20*time.Second, func() bool {
		s := statusOf(t, m, "helper").Stderr
		return len(s) > 0 && s[len(s)-1] == "line-150"
	}, "all stderr lines to arrive")
	lines := statusOf(t, m, "helper").Stderr
	if len(lines) != 100 || lines[0] != "line-051" || lines[99] != "line-150" {
		t.Fatalf("stderr ring: %d lines, first %q, last %q", len(lines), lines[0], lines[len(lines)-1])
	}
}

// TestStdioEnvHygiene: a stdio backend sees the minimal base environment
// plus its own Env; with InheritEnv everything but ISOGATE_*.
func TestStdioEnvHygiene(t *testing.T) {
	t.Setenv("ISOGATE_SERVER__AUTH_TOKEN", "gateway-secret")
	t.Setenv("OTHER_BACKEND_TOKEN", "other-secret")
	t.Setenv("LC_TIME", "C")
	minimal := helperSpec(t, "minimal", nil)
	inherit := helperSpec(t, "inherit", nil)
	inherit.InheritEnv = true
	m := startManager(t, Options{Specs: []Spec{minimal, inherit}})
	waitHealthy(t, m)
	envOf := func(name string) map[string]string {
		res, err := m.CallTool(context.Background(), name, "info", nil)
		if err != nil {
			t.Fatal(err)
		}
		var info helperInfo
		if err := json.Unmarshal([]byte(resultText(t, res)), &info); err != nil {
			t.Fatal(err)
		}
		env := map[string]string{}
		for _, kv := range info.Env {
			k, v, _ := strings.Cut(kv, "=")
			env[k] = v
		}
		return env
	}
	env := envOf("minimal")
	if _, ok := env["ISOGATE_SERVER__AUTH_TOKEN"]; ok {
		t.Errorf("minimal: gateway secret leaked")
	}
	if _, ok := env["OTHER_BACKEND_TOKEN"]; ok {
		t.Errorf("minimal: another backend's secret leaked")
	}
	if env["PATH"] != os.Getenv("PATH") || env["LC_TIME"] != "C" || env[helperEnv] != "serve" {
		t.Errorf("minimal: base or own env missing: %v", env)
	}
	env = envOf("inherit")
	if _, ok := env["ISOGATE_SERVER__AUTH_TOKEN"]; ok {
		t.Errorf("inherit: gateway secret leaked")
	}
	if env["OTHER_BACKEND_TOKEN"] != "other-secret" || env[helperEnv] != "serve" {
		t.Errorf("inherit: env not inherited: %v", env)
	}
}

func TestStdioKilledBackendIsRestarted(t *testing.T) {
	m := startManager(t, Options{
		Specs:              []Spec{helperSpec(t, "helper", nil)},
		RestartBackoffBase: 10 * time.Millisecond,
		StartWait:          20 * time.Second,
	})
	waitHealthy(t, m)
	pid := statusOf(t, m, "helper").PID
	if pid == 0 {
		t.Fatal("no pid for a running stdio backend")
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	// The manager notices the exit (and reaps the child).
	testutil.Eventually(t, 20*time.Second, func() bool {
		return errors.Is(syscall.Kill(pid, 0), syscall.ESRCH)
	}, "the killed child to be reaped")
	// The next call waits for the restart and succeeds.
	res, err := m.CallTool(context.Background(), "helper", "echo", map[string]any{"text": "after crash"})
	if err != nil {
		t.Fatalf("call after crash: %v\nstatus: %+v", err, m.Status())
	}
	if got := resultText(t, res); got != "after crash" {
		t.Fatalf("echo = %q", got)
	}
	st := statusOf(t, m, "helper")
	if st.Restarts != 1 || st.State != StateHealthy || st.PID == 0 || st.PID == pid {
		t.Fatalf("status after restart: %+v (old pid %d)", st, pid)
	}
}

func TestStdioCloseLeavesNoOrphans(t *testing.T) {
	// The child ignores SIGTERM, so Close must escalate to SIGKILL; its own
	// child (a grandchild, also ignoring SIGTERM) must die with the group.
	m := NewManager(Options{
		Logger:    testLogger(t),
		Specs:     []Spec{helperSpec(t, "stubborn", map[string]string{"ISOGATE_HELPER_IGNORE_TERM": "1"})},
		KillAfter: 300 * time.Millisecond,
	})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := m.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m.Close(context.Background()) })
	waitHealthy(t, m)
	pid := statusOf(t, m, "stubborn").PID
	res, err := m.CallTool(ctx, "stubborn", "spawn", nil)
	if err != nil {
		t.Fatal(err)
	}
	gpid, err := strconv.Atoi(resultText(t, res))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = syscall.Kill(gpid, syscall.SIGKILL) }) // in case the test fails
	if processGone(pid) || processGone(gpid) {
		t.Fatal("processes not running before Close")
	}

	if err := m.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Fatalf("child %d still exists after Close (kill -0: %v)", pid, err)
	}
	testutil.Eventually(t, 20*time.Second, func() bool { return processGone(gpid) }, "the grandchild %d to die", gpid)
	if st := statusOf(t, m, "stubborn"); st.State != StateStopped || st.PID != 0 {
		t.Fatalf("status after Close: %+v", st)
	}
}

func TestStdioCommandNotFound(t *testing.T) {
	m := startManager(t, Options{
		Specs:              []Spec{{Backend: config.Backend{Name: "missing", Transport: config.TransportStdio, Command: "/nonexistent/isogate-test-binary"}}},
		RestartBudget:      1,
		RestartBackoffBase: time.Millisecond,
	})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	err := m.WaitHealthy(ctx)
	if !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), "/nonexistent/isogate-test-binary") {
		t.Fatalf("WaitHealthy = %v", err)
	}
}

// TestStdioChildDiesWithGateway kills a gateway process with SIGKILL (so it
// runs no shutdown code) and checks that its stdio backend dies too. The
// backend ignores SIGTERM and stdin EOF, so only the parent-death signal can
// stop it.
func TestStdioChildDiesWithGateway(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the parent-death signal is Linux-only")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	gw := exec.Command(exe)
	gw.Env = append(os.Environ(), helperEnv+"=gateway")
	out, err := gw.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := gw.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = gw.Process.Kill(); _ = gw.Wait() })

	lines := make(chan string, 1)
	go func() {
		s := bufio.NewScanner(out)
		if s.Scan() {
			lines <- s.Text()
		}
		close(lines)
	}()
	var line string
	select {
	case line = <-lines:
	case <-time.After(30 * time.Second):
		t.Fatal("gateway helper did not report its backend")
	}
	pid, err := strconv.Atoi(line)
	if err != nil || pid <= 0 {
		t.Fatalf("gateway helper said %q", line)
	}
	t.Cleanup(func() { _ = syscall.Kill(pid, syscall.SIGKILL) })
	if processGone(pid) {
		t.Fatal("backend not running")
	}

	if err := gw.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = gw.Wait()
	testutil.Eventually(t, 20*time.Second, func() bool { return processGone(pid) }, "the orphaned backend %d to die", pid)
}

// TestStdioAnswerOverFrameLimit: a stdio backend's answer larger than the
// frame limit (16 MiB) ends its connection. The call failed with no code
// ("jsonrpcio: a JSON-RPC message exceeded the frame limit"), which a
// program reported as its own EVAL_ERROR and a passthrough call without
// isogate/code (found in a tryout with server-filesystem's read_text_file
// of a 67 MB file). Now it is BACKEND_CONNECTION_LOST naming the limit,
// and the next call is served by the restarted backend.
func TestStdioAnswerOverFrameLimit(t *testing.T) {
	m := startManager(t, Options{
		Specs:              []Spec{helperSpec(t, "helper", nil)},
		RestartBackoffBase: 10 * time.Millisecond,
		StartWait:          20 * time.Second,
	})
	waitHealthy(t, m)
	_, err := m.CallTool(context.Background(), "helper", "huge", map[string]any{"bytes": maxStdioFrame + 1})
	if v8sandbox.CodeOf(err) != CodeConnectionLost || !strings.Contains(err.Error(), "larger than 16 MiB") {
		t.Fatalf("an answer over the frame limit: %v (code %q)", err, v8sandbox.CodeOf(err))
	}
	res, err := m.CallTool(context.Background(), "helper", "echo", map[string]any{"text": "after"})
	if err != nil || resultText(t, res) != "after" {
		t.Fatalf("the call after it: %v", err)
	}
}
