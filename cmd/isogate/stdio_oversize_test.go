//go:build linux

package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestServeStdioOversizedMessage: over stdio, a client message beyond the
// 16 MiB frame limit does not end the gateway. A request gets a JSON-RPC
// error for its id naming the limit; a notification, and a batch whose ids
// cannot be known, are dropped with a log line; each time the session goes
// on (a ping after it is answered), and closing stdin still ends it
// cleanly. Before, the first such message ended the process with no
// answer.
func TestServeStdioOversizedMessage(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "isogate.yaml")
	if err := os.WriteFile(cfg, []byte(fmt.Sprintf("server:\n  cache_dir: %s\n  log_level: warn\n", filepath.Join(dir, "cache"))), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(binary, "serve", "--config", cfg)
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	defer func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
		}
	}()
	lines := bufio.NewReaderSize(stdout, 1<<20)
	send := func(s string) {
		t.Helper()
		if _, err := io.WriteString(stdin, s+"\n"); err != nil {
			t.Fatalf("writing to the gateway: %v (stderr: %s)", err, stderr.String())
		}
	}
	next := func() string {
		t.Helper()
		for {
			line, err := lines.ReadString('\n')
			if err != nil {
				t.Fatalf("reading the gateway's stdout: %v (stderr: %.2000s)", err, stderr.String())
			}
			if !strings.Contains(line, `"method":"notifications/`) {
				return strings.TrimSpace(line)
			}
		}
	}
	send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
	if got := next(); !strings.Contains(got, `"id":1`) {
		t.Fatalf("initialize: %s", got)
	}
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)

	pad := strings.Repeat("z", 17<<20) // over 16 MiB
	// A request: answered with an error for its id, naming the limit.
	send(`{"jsonrpc":"2.0","id":"big","method":"tools/call","params":{"name":"x","arguments":{"pad":"` + pad + `"}}}`)
	var resp struct {
		ID    any `json:"id"`
		Error *struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	got := next()
	if err := json.Unmarshal([]byte(got), &resp); err != nil || resp.ID != "big" || resp.Error == nil ||
		resp.Error.Code != -32600 || !strings.Contains(resp.Error.Message, "16 MiB") || len(got) > 1000 {
		t.Fatalf("oversized request: want a short error for id \"big\" naming 16 MiB, got %.300s", got)
	}
	send(`{"jsonrpc":"2.0","id":2,"method":"ping"}`)
	if got := next(); got != `{"jsonrpc":"2.0","id":2,"result":{}}` {
		t.Fatalf("ping after an oversized request: %.300s", got)
	}
	// A notification and a batch: dropped, said in the log.
	send(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"p","progress":1,"message":"` + pad + `"}}`)
	send(`[{"jsonrpc":"2.0","id":7,"method":"ping","params":{"_meta":{"pad":"` + pad + `"}}}]`)
	send(`{"jsonrpc":"2.0","id":3,"method":"ping"}`)
	if got := next(); got != `{"jsonrpc":"2.0","id":3,"result":{}}` {
		t.Fatalf("ping after an oversized notification and batch: %.300s", got)
	}
	stdin.Close()
	select {
	case err := <-exited:
		if err != nil {
			t.Fatalf("isogate serve after stdin closed: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("isogate serve still running 30 s after its stdin closed")
	}
	if log := stderr.String(); strings.Count(log, "exceeds the 16 MiB limit") < 2 {
		t.Fatalf("the dropped messages are not in the log:\n%.3000s", log)
	}
}
