//go:build linux

package main

import (
	"bufio"
	"bytes"
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

// rawStdio is `isogate serve` (default backends: none) spoken to by hand
// over its stdin and stdout, one JSON-RPC message per line.
type rawStdio struct {
	t      *testing.T
	stdin  io.WriteCloser
	lines  *bufio.Reader
	stderr *bytes.Buffer
	exited chan error
}

// startRawStdio starts `isogate serve` logging at logLevel, its stdin and
// stdout pipes (the go-sdk's, Python's) or, with sockets, Unix socket
// pairs (Node's child_process: the TypeScript SDK's). The process is killed
// at the test's end if it still runs.
func startRawStdio(t *testing.T, logLevel string, sockets bool) *rawStdio {
	t.Helper()
	dir := t.TempDir()
	cfg := filepath.Join(dir, "isogate.yaml")
	if err := os.WriteFile(cfg, []byte(fmt.Sprintf("server:\n  cache_dir: %s\n  log_level: %s\n", filepath.Join(dir, "cache"), logLevel)), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(binary, "serve", "--config", cfg)
	g := &rawStdio{t: t, stderr: &bytes.Buffer{}, exited: make(chan error, 1)}
	cmd.Stderr = g.stderr
	var stdout io.Reader
	if sockets {
		in, childIn := socketPair(t)
		out, childOut := socketPair(t)
		cmd.Stdin, cmd.Stdout = childIn, childOut
		g.stdin, stdout = in, out
		defer childIn.Close()
		defer childOut.Close()
	} else {
		g.stdin, _ = cmd.StdinPipe()
		stdout, _ = cmd.StdoutPipe()
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { g.exited <- cmd.Wait() }()
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
		}
	})
	g.lines = bufio.NewReaderSize(stdout, 1<<20)
	return g
}

// send writes s and a newline to the gateway's stdin.
func (g *rawStdio) send(s string) {
	g.t.Helper()
	if _, err := io.WriteString(g.stdin, s+"\n"); err != nil {
		g.t.Fatalf("writing to the gateway: %v (stderr: %.2000s)", err, g.stderr.String())
	}
}

// next returns the next line of the gateway's stdout that is not a
// notification, trimmed.
func (g *rawStdio) next() string {
	g.t.Helper()
	for {
		line, err := g.lines.ReadString('\n')
		if err != nil {
			g.t.Fatalf("reading the gateway's stdout: %v (stderr: %.2000s)", err, g.stderr.String())
		}
		if !strings.Contains(line, `"method":"notifications/`) {
			return strings.TrimSpace(line)
		}
	}
}

// initialize opens the session at protocol version and returns the
// initialize response's line.
func (g *rawStdio) initialize(version string) string {
	g.t.Helper()
	g.send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"` + version + `","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
	got := g.next()
	if !strings.Contains(got, `"id":1`) {
		g.t.Fatalf("initialize: %s", got)
	}
	g.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return got
}

// closeAndWait closes the gateway's stdin and fails the test unless the
// gateway then exits cleanly within 30 s.
func (g *rawStdio) closeAndWait() {
	g.t.Helper()
	g.stdin.Close()
	select {
	case err := <-g.exited:
		if err != nil {
			g.t.Fatalf("isogate serve after stdin closed: %v", err)
		}
	case <-time.After(30 * time.Second):
		g.t.Fatal("isogate serve still running 30 s after its stdin closed")
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
