//go:build linux

package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestServeStdioWire speaks JSON-RPC by hand to `isogate serve` over the
// two kinds of stdin clients give it, pipes (the go-sdk, Python) and
// sockets (Node's child_process, so the TypeScript SDK): a batch of two
// requests (2025-03-26 allows batches) is answered with one array holding
// both responses, a message pretty-printed over several lines is one
// message, a large one arrives whole, and closing stdin ends the gateway.
func TestServeStdioWire(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "isogate.yaml")
	if err := os.WriteFile(cfg, []byte(fmt.Sprintf("server:\n  cache_dir: %s\n  log_level: error\n", filepath.Join(dir, "cache"))), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, kind := range []string{"pipes", "sockets"} {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			cmd := exec.Command(binary, "serve", "--config", cfg)
			var stdin io.WriteCloser
			var stdout io.Reader
			if kind == "pipes" {
				stdin, _ = cmd.StdinPipe()
				stdout, _ = cmd.StdoutPipe()
			} else {
				in, childIn := socketPair(t)
				out, childOut := socketPair(t)
				cmd.Stdin, cmd.Stdout = childIn, childOut
				stdin, stdout = in, out
				defer childIn.Close()
				defer childOut.Close()
			}
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
					t.Fatal(err)
				}
			}
			// next returns the next line that is not a notification.
			next := func() string {
				t.Helper()
				for {
					line, err := lines.ReadString('\n')
					if err != nil {
						t.Fatalf("reading the gateway's stdout: %v", err)
					}
					if !strings.Contains(line, `"method":"notifications/`) {
						return strings.TrimSpace(line)
					}
				}
			}
			send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
			if got := next(); !strings.Contains(got, `"id":1`) || !strings.Contains(got, `"protocolVersion":"2025-03-26"`) {
				t.Fatalf("initialize: %s", got)
			}
			send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)

			send(`[{"jsonrpc":"2.0","id":2,"method":"ping"},{"jsonrpc":"2.0","id":"three","method":"tools/list"}]`)
			var batch []map[string]any
			if got := next(); json.Unmarshal([]byte(got), &batch) != nil || len(batch) != 2 ||
				batch[0]["id"] != float64(2) || batch[1]["id"] != "three" || batch[1]["result"] == nil {
				t.Fatalf("batch: want one array answering 2 then \"three\", got %.300s", got)
			}

			send("{\n  \"jsonrpc\": \"2.0\",\n  \"id\": 4,\n  \"method\": \"ping\"\n}")
			if got := next(); got != `{"jsonrpc":"2.0","id":4,"result":{}}` {
				t.Fatalf("multi-line ping: %s", got)
			}

			pad := strings.Repeat("z", 256<<10) // many reads' worth
			send(`{"jsonrpc":"2.0","id":5,"method":"ping","params":{"_meta":{"pad":"` + pad + `"}}}`)
			if got := next(); got != `{"jsonrpc":"2.0","id":5,"result":{}}` {
				t.Fatalf("large ping: %.200s", got)
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
		})
	}
}

// socketPair returns the two ends of a connected Unix stream socket pair.
func socketPair(t *testing.T) (*os.File, *os.File) {
	t.Helper()
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	a, b := os.NewFile(uintptr(fds[0]), "parent"), os.NewFile(uintptr(fds[1]), "child")
	t.Cleanup(func() { a.Close(); b.Close() })
	return a, b
}
