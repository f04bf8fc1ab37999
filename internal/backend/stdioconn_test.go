//go:build unix

package backend

import (
	"bufio"
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// TestCommandConnRoundTrip writes messages to a child that echoes its
// stdin (cat), a large one among them, and reads each back whole and in
// order; Close then ends the child through its stdin alone.
func TestCommandConnRoundTrip(t *testing.T) {
	c, err := startCommand(exec.Command("cat"), 10*time.Second, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	id1, _ := jsonrpc.MakeID(float64(1))
	id2, _ := jsonrpc.MakeID("two")
	big := `{"text":"` + strings.Repeat("y", 1<<20) + `"}`
	sent := []jsonrpc.Message{
		&jsonrpc.Request{ID: id1, Method: "tools/call", Params: []byte(`{"name":"echo"}`)},
		&jsonrpc.Response{ID: id2, Result: []byte(big)},
		&jsonrpc.Request{Method: "notifications/initialized"},
	}
	done := make(chan error, 1)
	go func() {
		for _, m := range sent {
			if err := c.Write(ctx, m); err != nil {
				done <- err
				return
			}
		}
		done <- nil
	}()
	for i, want := range sent {
		got, err := c.Read(ctx)
		if err != nil {
			t.Fatalf("message %d: %v", i, err)
		}
		g, _ := jsonrpc.EncodeMessage(got)
		w, _ := jsonrpc.EncodeMessage(want)
		if string(g) != string(w) {
			t.Fatalf("message %d: got %.200s, want %.200s", i, g, w)
		}
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if err := c.Close(); err != nil {
		t.Fatalf("close: %v (cat should exit on its stdin's end)", err)
	}
	if _, err := c.Read(ctx); !errors.Is(err, io.EOF) {
		t.Fatalf("read after close: %v, want EOF", err)
	}
}

// TestCommandConnCloseEscalates: a child that ignores the end of its stdin
// gets SIGTERM after the terminate delay, and one that ignores SIGTERM too
// gets SIGKILL after as long again; a Read blocked meanwhile returns.
func TestCommandConnCloseEscalates(t *testing.T) {
	for _, tc := range []struct {
		name, script, want string
	}{
		{"SIGTERM", "echo ready >&2; exec sleep 60", "terminated"},
		{"SIGKILL", `trap "" TERM; echo ready >&2; exec sleep 60`, "killed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// The child says on stderr when it is set up: a SIGTERM sent
			// before the shell ran its trap (a slow start on a loaded
			// machine) would end it as "terminated".
			ready, w, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			defer ready.Close()
			cmd := exec.Command("sh", "-c", tc.script)
			cmd.Stderr = w
			c, err := startCommand(cmd, 200*time.Millisecond, nil)
			w.Close()
			if err != nil {
				t.Fatal(err)
			}
			_ = ready.SetReadDeadline(time.Now().Add(20 * time.Second)) // a give-up bound
			if line, err := bufio.NewReader(ready).ReadString('\n'); line != "ready\n" {
				t.Fatalf("the child's set-up: %q, %v", line, err)
			}
			read := make(chan error, 1)
			go func() {
				_, err := c.Read(context.Background())
				read <- err
			}()
			err = c.Close()
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("close: %v, want the child %s", err, tc.want)
			}
			if err := <-read; !errors.Is(err, io.EOF) {
				t.Fatalf("blocked read: %v, want EOF", err)
			}
		})
	}
}

// TestProcGoneOnceReaped: a stdio child counts as gone (no request can
// reach it) once it has exited and the connection's end has waited for
// it, not before: while it runs, and while it is dead but not yet waited
// for (a zombie, as kill(pid, 0) saw it). The handle learns it from the
// connection, with no system call on every tool call.
func TestProcGoneOnceReaped(t *testing.T) {
	cmd := exec.Command("cat")
	h := &procHandle{cmd: cmd}
	c, err := startCommand(cmd, 10*time.Second, h.markReaped)
	if err != nil {
		t.Fatal(err)
	}
	h.markStarted()
	if h.gone() {
		t.Fatal("gone while the child runs")
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Read(context.Background()); err == nil { // its stdout ends: it has exited
		t.Fatal("read from a killed child")
	}
	if h.gone() {
		t.Fatal("gone before the connection waited for the child")
	}
	_ = c.Close()
	if !h.gone() {
		t.Fatal("not gone after the connection waited for the child")
	}
	var none *procHandle
	if none.gone() {
		t.Fatal("a connection without a child process counts as gone")
	}
}
