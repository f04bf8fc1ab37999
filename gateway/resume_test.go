package gateway

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
)

// sseIDs returns the ids of the events of an SSE body, in order.
func sseIDs(body string) []string {
	var ids []string
	for _, line := range strings.Split(body, "\n") {
		if id, ok := strings.CutPrefix(line, "id: "); ok {
			ids = append(ids, strings.TrimSpace(id))
		}
	}
	return ids
}

// A client of 2025-11-25 resumes a POST stream with GET and
// Last-Event-ID: the gateway's event store (resumeStore) replays the
// answer after the priming event, through the go-sdk's own handler.
func TestResumePOSTStreamAfterPriming(t *testing.T) {
	h := newHTTPGateway(t, nil)
	ctx := context.Background()
	hdr := map[string]string{"Mcp-Session-Id": rawInitialize(t, h.url), "Mcp-Protocol-Version": "2025-11-25"}
	resp, err := post(t, ctx, h.url, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, hdr)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()

	resp, err = post(t, ctx, h.url, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"call_tool_chain","arguments":{"code":"return 6*7"}}}`, hdr)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	ids := sseIDs(string(body))
	if len(ids) < 2 || !strings.Contains(string(body), `42`) {
		t.Fatalf("the POST stream has no priming event and answer: %q", body)
	}

	req, err := http.NewRequestWithContext(ctx, http.MethodGet, h.url, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Last-Event-ID", ids[0])
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	replayed, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(replayed), `"id":2`) || !strings.Contains(string(replayed), `42`) {
		t.Fatalf("resumed after %s: %d %q", ids[0], resp.StatusCode, replayed)
	}
}
