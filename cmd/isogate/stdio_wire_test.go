//go:build linux

package main

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestServeStdioWire speaks JSON-RPC by hand to `isogate serve` over the
// two kinds of stdin clients give it, pipes (the go-sdk, Python) and
// sockets (Node's child_process, so the TypeScript SDK): a batch of two
// requests (2025-03-26 allows batches) is answered with one array holding
// both responses, a message pretty-printed over several lines is one
// message, a large one arrives whole, and closing stdin ends the gateway.
func TestServeStdioWire(t *testing.T) {
	for _, kind := range []string{"pipes", "sockets"} {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			g := startRawStdio(t, "error", kind == "sockets")
			if got := g.initialize("2025-03-26"); !strings.Contains(got, `"protocolVersion":"2025-03-26"`) {
				t.Fatalf("initialize: %s", got)
			}

			g.send(`[{"jsonrpc":"2.0","id":2,"method":"ping"},{"jsonrpc":"2.0","id":"three","method":"tools/list"}]`)
			var batch []map[string]any
			if got := g.next(); json.Unmarshal([]byte(got), &batch) != nil || len(batch) != 2 ||
				batch[0]["id"] != float64(2) || batch[1]["id"] != "three" || batch[1]["result"] == nil {
				t.Fatalf("batch: want one array answering 2 then \"three\", got %.300s", got)
			}

			g.send("{\n  \"jsonrpc\": \"2.0\",\n  \"id\": 4,\n  \"method\": \"ping\"\n}")
			if got := g.next(); got != `{"jsonrpc":"2.0","id":4,"result":{}}` {
				t.Fatalf("multi-line ping: %s", got)
			}

			pad := strings.Repeat("z", 256<<10) // many reads' worth
			g.send(`{"jsonrpc":"2.0","id":5,"method":"ping","params":{"_meta":{"pad":"` + pad + `"}}}`)
			if got := g.next(); got != `{"jsonrpc":"2.0","id":5,"result":{}}` {
				t.Fatalf("large ping: %.200s", got)
			}
			g.closeAndWait()
		})
	}
}
