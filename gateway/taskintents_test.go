package gateway

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/isogate/isogate/config"
)

// TestRefusedTaskRequestsLeaveNoIntent: task requests that the go-sdk
// refuses before any middleware sees them (an Accept header without
// text/event-stream, an unsupported Mcp-Protocol-Version) are sent over
// real HTTP, many of each: a 2025-11-25 task-augmented tools/call and a
// 2026-07-28 one (stateless), and a task-augmented tools/call and a
// tasks/result in an open session (stateful). Each is refused, and
// afterwards no intent is left (isogate_task_intents is 0; it once kept
// every one, ~400 bytes each, for ever). A task made properly afterwards
// still runs and completes, and leaves none either.
func TestRefusedTaskRequestsLeaveNoIntent(t *testing.T) {
	const n = 40
	badHeaders := []map[string]string{
		{"Accept": "application/json"},
		{"Mcp-Protocol-Version": "1999-01-01"},
	}
	send := func(t *testing.T, url string, headers map[string]string, body any) (int, string) {
		t.Helper()
		raw, _ := json.Marshal(body)
		req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, url, strings.NewReader(string(raw)))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
		for k, v := range headers {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	intents := func(t *testing.T, h *httpGateway) float64 {
		t.Helper()
		_, text := h.get(t, "/metrics")
		v, ok := sample(text, "isogate_task_intents")
		if !ok {
			t.Fatal("/metrics has no isogate_task_intents")
		}
		return v
	}
	chain := func(i int) map[string]any {
		return map[string]any{"name": "call_tool_chain", "arguments": map[string]any{"code": fmt.Sprintf("return %d", i)},
			"task": map[string]any{"ttl": 60000}}
	}

	t.Run("stateless", func(t *testing.T) {
		h := newHTTPGateway(t, func(c *config.Config) { c.Server.Stateless = true })
		modernMeta := map[string]any{"io.modelcontextprotocol/protocolVersion": "2026-07-28",
			"io.modelcontextprotocol/clientInfo":         map[string]any{"name": "intents", "version": "1"},
			"io.modelcontextprotocol/clientCapabilities": map[string]any{"extensions": map[string]any{"io.modelcontextprotocol/tasks": map[string]any{}}}}
		for i := range n {
			bad := badHeaders[i%len(badHeaders)]
			if code, body := send(t, h.url, bad, map[string]any{"jsonrpc": "2.0", "id": i, "method": "tools/call", "params": chain(i)}); code < 400 {
				t.Fatalf("a task-augmented call with %v was answered %d: %s", bad, code, body)
			}
			modern := map[string]any{"name": "call_tool_chain", "arguments": map[string]any{"code": "return 1"}, "_meta": modernMeta}
			headers := map[string]string{"Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "call_tool_chain",
				"Accept": "application/json"}
			if code, body := send(t, h.url, headers, map[string]any{"jsonrpc": "2.0", "id": i, "method": "tools/call", "params": modern}); code < 400 {
				t.Fatalf("a 2026-07-28 task call without text/event-stream was answered %d: %s", code, body)
			}
		}
		if got := intents(t, h); got != 0 {
			t.Errorf("after %d refused task requests the gateway keeps %v task intents, want 0", 2*n, got)
		}
		// A proper task still runs, and leaves no intent either.
		created, err := rawCall(t.Context(), h.url, "", "tools/call", chain(7))
		if err != nil || created.Error != nil || !strings.Contains(string(created.Result), `"taskId"`) {
			t.Fatalf("a proper task: %v %+v %s", err, created.Error, created.Result)
		}
		var ct struct {
			Task struct {
				TaskID string `json:"taskId"`
			} `json:"task"`
		}
		_ = json.Unmarshal(created.Result, &ct)
		res, err := rawCall(t.Context(), h.url, "", "tasks/result", map[string]any{"taskId": ct.Task.TaskID})
		if err != nil || res.Error != nil || !strings.Contains(string(res.Result), "7") {
			t.Fatalf("the proper task's result: %v %+v %s", err, res.Error, res.Result)
		}
		if got := intents(t, h); got != 0 {
			t.Errorf("after a proper task the gateway keeps %v task intents, want 0", got)
		}
	})

	t.Run("sessions", func(t *testing.T) {
		h := newHTTPGateway(t, nil)
		session := h.connect(t, nil).ID()
		if session == "" {
			t.Fatal("no session id")
		}
		for i := range n {
			bad := map[string]string{"Mcp-Session-Id": session}
			for k, v := range badHeaders[i%len(badHeaders)] {
				bad[k] = v
			}
			for _, req := range []map[string]any{
				{"jsonrpc": "2.0", "id": 1000 + i, "method": "tools/call", "params": chain(i)},
				{"jsonrpc": "2.0", "id": 2000 + i, "method": "tasks/result", "params": map[string]any{"taskId": "0123456789abcdef"}},
			} {
				if code, body := send(t, h.url, bad, req); code < 400 {
					t.Fatalf("%s with %v was answered %d: %s", req["method"], bad, code, body)
				}
			}
		}
		if got := intents(t, h); got != 0 {
			t.Errorf("after %d refused task requests in a session the gateway keeps %v task intents, want 0", 2*n, got)
		}
	})
}
