package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/isogate/isogate/internal/testutil"
)

// Issue 25 (9): `isogate serve` that received SIGTERM while a program ran
// (for(;;){}, a long sandbox.timeout) logged "shutting down grace=5s" and
// was still running 15 s later. Over stdio and HTTP, with a busy program
// and with one waiting on a slow backend, the process exits within its
// grace period.
func TestSIGTERMEndsInFlightProgramsWithinGrace(t *testing.T) {
	const grace = 3 * time.Second
	busy := `await everything.echo({message: "started"}); for (;;) {}`
	slow := `await everything.trigger_long_running_operation({duration: 50, steps: 50}); return "finished"`
	for _, c := range []struct {
		name, transport, code string
	}{
		{"http busy", "http", busy},
		{"stdio busy", "stdio", busy},
		{"stdio slow backend", "stdio", slow},
		// http with a slow backend: TestSIGTERMCancelsRunsAndExitsWithinGrace.
	} {
		t.Run(c.name, func(t *testing.T) { testSIGTERMWithin(t, c.transport, c.code, grace) })
	}
}

func testSIGTERMWithin(t *testing.T, transport, code string, grace time.Duration) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "isogate.yaml")
	if err := os.WriteFile(cfg, []byte(fmt.Sprintf(`server:
  cache_dir: %s
  shutdown_grace: %s
backends:
  everything:
    command: node
    args: [%q, stdio]
    timeout: 120s
sandbox:
  timeout: 120s
`, filepath.Join(dir, "cache"), grace, everythingServer(t))), 0o600); err != nil {
		t.Fatal(err)
	}
	args := []string{"serve", "--config", cfg}
	addr := ""
	if transport == "http" {
		addr = freeAddr(t)
		args = append(args, "--http", addr)
	}
	cmd := exec.Command(binary, args...)
	stderr, _ := cmd.StderrPipe()
	var stdin io.WriteCloser
	var stdout io.ReadCloser
	if transport == "stdio" {
		stdin, _ = cmd.StdinPipe()
		stdout, _ = cmd.StdoutPipe()
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var logs syncLog
	logDone := make(chan struct{})
	go func() {
		defer close(logDone)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			logs.add(sc.Text())
		}
	}()
	exited := make(chan error, 1)
	go func() { <-logDone; exited <- cmd.Wait() }()
	t.Cleanup(func() { _ = cmd.Process.Kill() })

	var mt mcp.Transport
	if transport == "http" {
		testutil.Eventually(t, 20*time.Second, func() bool { return healthy(addr) }, "isogate on %s to answer", addr)
		// No reconnection to a gateway that exits on purpose: with the
		// default retries, closing the session took some 18 s of backoff.
		mt = &mcp.StreamableClientTransport{Endpoint: "http://" + addr + "/mcp", MaxRetries: -1}
	} else {
		mt = &mcp.IOTransport{Reader: stdout, Writer: stdin}
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test-client"}, nil).Connect(context.Background(), mt, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	go func() {
		_, _ = cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "call_tool_chain", Arguments: map[string]any{"code": code}})
	}()
	// Wait until the run is under way: its backend call in flight (slow),
	// or made (busy: the loop follows it).
	testutil.Eventually(t, 60*time.Second, func() bool {
		res, err := cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: "isogate://backend/everything"})
		return err == nil && (strings.Contains(res.Contents[0].Text, `"in_flight": 1`) || strings.Contains(res.Contents[0].Text, `"calls": 1`))
	}, "the run to start")

	start := time.Now()
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-exited:
	case <-time.After(grace + 10*time.Second):
		_ = cmd.Process.Signal(syscall.SIGQUIT) // a goroutine dump in the log
		<-exited
		t.Fatalf("still running %s after SIGTERM (grace %s)\n%s", time.Since(start).Round(time.Millisecond), grace, logs.String())
	}
	if took := time.Since(start); took > grace+2*time.Second {
		t.Fatalf("exited %s after SIGTERM, past the grace period of %s\n%s", took, grace, logs.String())
	}
	if !strings.Contains(logs.String(), "shutting down") {
		t.Errorf("no shutdown log line:\n%s", logs.String())
	}
}
