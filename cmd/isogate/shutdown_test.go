package main

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/isogate/isogate/internal/testutil"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestSIGTERMCancelsRunsAndExitsWithinGrace sends a real SIGTERM to the
// real binary while a run waits on a 50-second backend operation: the run
// is cancelled at once, the client gets an answer or a closed connection,
// and the process exits without waiting out its 30-second grace period.
func TestSIGTERMCancelsRunsAndExitsWithinGrace(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "isogate.yaml")
	os.WriteFile(cfg, []byte(fmt.Sprintf(`server:
  cache_dir: %s
  shutdown_grace: 30s
backends:
  everything:
    command: node
    args: [%q, stdio]
    timeout: 120s
sandbox:
  isolation: thread
  trusted_code: true
  timeout: 120s
`, filepath.Join(dir, "cache"), everythingServer(t))), 0o600)

	addr := freeAddr(t)
	cmd := exec.Command(binary, "serve", "--config", cfg, "--http", addr)
	stderr, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	var logs syncLog
	logDone := make(chan struct{})
	go func() {
		defer close(logDone)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			logs.add(sc.Text())
		}
	}()
	go func() { <-logDone; exited <- cmd.Wait() }()
	t.Cleanup(func() { _ = cmd.Process.Kill() })

	url := "http://" + addr + "/mcp"
	testutil.Eventually(t, 20*time.Second, func() bool { return healthy(addr) }, "isogate on %s to answer", addr)
	client := mcp.NewClient(&mcp.Implementation{Name: "test-client"}, nil)
	// No reconnecting: the call ends when the gateway does (the SDK
	// retries 5 times over ~15 s).
	cs, err := client.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: url, MaxRetries: -1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()

	callDone := make(chan string, 1)
	go func() {
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "call_tool_chain",
			Arguments: map[string]any{"code": `await everything.trigger_long_running_operation({duration: 50, steps: 50}); return "finished"`}})
		switch {
		case err != nil:
			callDone <- "error: " + err.Error()
		default:
			callDone <- res.Content[0].(*mcp.TextContent).Text
		}
	}()
	// Wait until the backend call is in flight (the backend's status says so).
	testutil.Eventually(t, 60*time.Second, func() bool {
		res, err := cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: "isogate://backend/everything"})
		return err == nil && strings.Contains(res.Contents[0].Text, `"in_flight": 1`)
	}, "the backend call to start")

	start := time.Now()
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-exited:
		if err != nil {
			t.Fatalf("exit: %v\n%s", err, logs.String())
		}
	case <-time.After(40 * time.Second):
		t.Fatalf("still running 40s after SIGTERM (grace 30s)\n%s", logs.String())
	}
	// The run is cancelled at once, so the exit does not wait out the
	// (long) grace period.
	if took := time.Since(start); took > 10*time.Second {
		t.Fatalf("exited %s after SIGTERM: the in-flight run was not cancelled\n%s", took, logs.String())
	}
	t.Logf("exited %s after SIGTERM", time.Since(start).Round(time.Millisecond))
	select {
	case text := <-callDone:
		t.Logf("call ended %s after SIGTERM: %.200s", time.Since(start).Round(time.Millisecond), text)
		if strings.Contains(text, "finished") {
			t.Fatalf("the run was not cancelled: %s", text)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the client's call never ended")
	}
	if !strings.Contains(logs.String(), "shutting down") {
		t.Errorf("no shutdown log line:\n%s", logs.String())
	}
}

// syncLog collects log lines from one goroutine for another.
type syncLog struct {
	mu sync.Mutex
	sb strings.Builder
}

func (l *syncLog) add(line string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.sb.WriteString(line + "\n")
}

func (l *syncLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.sb.String()
}
