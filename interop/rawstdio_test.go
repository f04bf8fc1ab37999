package interop

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os/exec"
	"testing"
	"time"
)

// TestRawStdioErrorCodes speaks JSON-RPC to `isogate serve` over stdio by
// hand, to send what a well-behaved SDK never does: a request before
// "notifications/initialized" (the go-sdk answers it before any
// middleware, with a plain error) must still carry a real code. The gate
// is "initialize" itself: a request before it is refused.
func TestRawStdioErrorCodes(t *testing.T) {
	t.Parallel()
	cmd := exec.Command(binary, "serve", "--config", config)
	cmd.Env = gatewayEnv()
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		stdin.Close()
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(15 * time.Second):
			_ = cmd.Process.Kill()
		}
	}()
	lines := make(chan map[string]any, 16)
	go func() {
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 1<<20), 16<<20)
		for sc.Scan() {
			var m map[string]any
			if json.Unmarshal(sc.Bytes(), &m) == nil {
				lines <- m
			}
		}
		close(lines)
	}()
	send := func(w io.Writer, s string) {
		if _, err := fmt.Fprintln(w, s); err != nil {
			t.Fatal(err)
		}
	}
	response := func(id float64) map[string]any {
		t.Helper()
		timeout := time.After(60 * time.Second)
		for {
			select {
			case m, ok := <-lines:
				if !ok {
					t.Fatal("isogate closed stdout")
				}
				if m["id"] == id {
					return m
				}
			case <-timeout:
				t.Fatalf("no response to request %v", id)
			}
		}
	}
	send(stdin, `{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{}}`) // before initialize
	r := response(2)
	e, _ := r["error"].(map[string]any)
	if code, _ := e["code"].(float64); code != -32600 {
		t.Errorf("tools/list before initialize: %v, want code -32600", r)
	}
	send(stdin, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
	if r := response(1); r["result"] == nil {
		t.Fatalf("initialize: %v", r)
	}
	send(stdin, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	send(stdin, `{"jsonrpc":"2.0","id":3,"method":"resources/read","params":{"uri":"isogate://result/nosuchid/a/b"}}`)
	r = response(3)
	e, _ = r["error"].(map[string]any)
	if code, _ := e["code"].(float64); code != -32602 && code != -32002 {
		t.Errorf("unknown result: %v, want -32602 or -32002", r)
	}
	send(stdin, `{"jsonrpc":"2.0","id":4,"method":"no/such/method","params":{}}`)
	r = response(4)
	e, _ = r["error"].(map[string]any)
	if code, _ := e["code"].(float64); code != -32601 {
		t.Errorf("unknown method: %v, want -32601", r)
	}
}
