package tasks

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestTaskIntentsAreBounded: past maxTaskIntents pending intents a new one
// is refused with TASKS_BUSY (a JSON-RPC error carrying the code), and
// one ending makes room again.
func TestTaskIntentsAreBounded(t *testing.T) {
	g := &Tasks{}
	var last string
	for i := range maxTaskIntents {
		token, err := g.intents.add(&taskIntent{})
		if err != nil {
			t.Fatalf("intent %d refused: %v", i, err)
		}
		last = token
	}
	if _, err := g.intents.add(&taskIntent{}); !errors.Is(err, errTooManyIntents) {
		t.Fatalf("intent past the bound: %v, want errTooManyIntents", err)
	}
	params, _ := json.Marshal(map[string]any{"name": "x", "task": map[string]any{}})
	if _, token, err := g.augment(params, "o", nil); err == nil || token != "" {
		t.Fatalf("a task-augmented call past the bound: token %q, err %v", token, err)
	}
	if data := string(errTasksBusy().Data); !strings.Contains(data, codeTasksBusy) {
		t.Fatalf("TASKS_BUSY's data: %s", data)
	}
	g.intents.drop(last)
	if _, err := g.intents.add(&taskIntent{}); err != nil {
		t.Fatalf("after one ended, a new intent: %v", err)
	}
}

// TestStdioTaskIntentEndsWithItsRequest: over stdio a task-augmented
// tools/call's intent lives until its request is answered (the go-sdk may
// answer it without running the call, e.g. before initialize) or the
// connection closes, never longer.
func TestStdioTaskIntentEndsWithItsRequest(t *testing.T) {
	g := &Tasks{}
	ct, st := mcp.NewInMemoryTransports()
	ctx := context.Background()
	server, err := taskTransport{Transport: st, tasks: g}.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	client, err := ct.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	call := func(id int64, method string) jsonrpc.ID {
		params, _ := json.Marshal(map[string]any{"name": "call_tool_chain", "arguments": map[string]any{}, "task": map[string]any{"ttl": 1000},
			"taskId": "0123"})
		rid, _ := jsonrpc.MakeID(float64(id))
		if err := client.Write(ctx, &jsonrpc.Request{ID: rid, Method: method, Params: params}); err != nil {
			t.Fatal(err)
		}
		msg, err := server.Read(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if req := msg.(*jsonrpc.Request); req.Method != "tools/call" || !strings.Contains(string(req.Params), "isogate/task") {
			t.Fatalf("%s read as %s %s", method, req.Method, req.Params)
		}
		return rid
	}
	first := call(1, "tools/call")
	call(2, "tasks/result")
	if n := g.intents.len(); n != 2 {
		t.Fatalf("%d intents pending, want 2", n)
	}
	// The go-sdk refuses the call without running it: its answer ends it.
	if err := server.Write(ctx, &jsonrpc.Response{ID: first, Error: &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: "not initialized"}}); err != nil {
		t.Fatal(err)
	}
	if n := g.intents.len(); n != 1 {
		t.Fatalf("after the call's answer %d intents pending, want 1", n)
	}
	server.Close()
	if n := g.intents.len(); n != 0 {
		t.Fatalf("after the connection closed %d intents pending, want 0", n)
	}
}
