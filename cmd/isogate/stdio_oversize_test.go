//go:build linux

package main

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestServeStdioOversizedMessage: over stdio, a client message beyond the
// 16 MiB frame limit does not end the gateway. A request gets a JSON-RPC
// error for its id naming the limit; a notification, and a batch whose ids
// cannot be known, are dropped with a log line; each time the session goes
// on (a ping after it is answered), and closing stdin still ends it
// cleanly. Before, the first such message ended the process with no
// answer.
func TestServeStdioOversizedMessage(t *testing.T) {
	g := startRawStdio(t, "warn", false)
	send, next := g.send, g.next
	g.initialize("2025-06-18")

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
	g.closeAndWait()
	if log := g.stderr.String(); strings.Count(log, "exceeds the 16 MiB limit") < 2 {
		t.Fatalf("the dropped messages are not in the log:\n%.3000s", log)
	}
}
