package tasks

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/isogate/isogate/internal/httpbody"
	"github.com/isogate/isogate/internal/resultstore"
)

// TestPlainCallCostsTheBoundaryNothing: a tools/call that is not
// task-augmented passes the task boundary, over stdio (augment) and over
// 2026-07-28 HTTP without the tasks extension (augmentModern), unchanged
// and without being decoded: no allocation at all. (Red before: each was
// decoded into a map: 16 and 19 allocations.)
func TestPlainCallCostsTheBoundaryNothing(t *testing.T) {
	g := &Tasks{}
	params := json.RawMessage(`{"name":"echo__echo","arguments":{"message":"hello"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","progressToken":3}}`)
	if n := testing.AllocsPerRun(100, func() {
		if out, token, err := g.augment(params, "o", nil); err != nil || token != "" || string(out) != string(params) {
			t.Fatalf("augment: %s %q %v", out, token, err)
		}
	}); n != 0 {
		t.Errorf("augment of a plain call: %.0f allocations, want 0", n)
	}
	if n := testing.AllocsPerRun(100, func() {
		if out, token, err := g.augmentModern(params, requestMeta{modern: true, version: "2026-07-28"}, "o"); err != nil || token != "" || string(out) != string(params) {
			t.Fatalf("augmentModern: %s %q %v", out, token, err)
		}
	}); n != 0 {
		t.Errorf("augmentModern of a plain call: %.0f allocations, want 0", n)
	}
}

// TestMayHaveKey: the pre-check never says no to text that holds the key,
// however it is spelt (an escaped key is decoded as the key).
func TestMayHaveKey(t *testing.T) {
	for _, c := range []struct {
		text string
		want bool
	}{
		{`{"name":"x"}`, false},
		{`{"name":"x","arguments":{"tasks":1}}`, false},
		{`{"name":"x","task":{}}`, true},
		{`{"name":"x","t\u0061sk":{}}`, true},
		{`{"name":"task"}`, true}, // a value: decoded, then found absent
	} {
		if got := mayHaveKey([]byte(c.text), "task"); got != c.want {
			t.Errorf("mayHaveKey(%s) = %v, want %v", c.text, got, c.want)
		}
		var m map[string]json.RawMessage
		if err := json.Unmarshal([]byte(c.text), &m); err != nil {
			t.Fatal(err)
		}
		if _, has := m["task"]; has && !mayHaveKey([]byte(c.text), "task") {
			t.Errorf("%s holds the key but mayHaveKey says no", c.text)
		}
	}
}

// TestEscapedTaskKeyStillAugments: a task-augmented call whose key is
// written with an escape is still run as a task.
func TestEscapedTaskKeyStillAugments(t *testing.T) {
	g := &Tasks{}
	_, token, err := g.augment(json.RawMessage(`{"name":"x","t\u0061sk":{"ttl":1000}}`), "o", nil)
	if err != nil || token == "" {
		t.Fatalf("escaped task key: token %q, err %v", token, err)
	}
	g.intents.drop(token)
}

// TestHTTPPlainCallPassesItsBody: over a 2025-11-25 session, a tools/call
// that is not task-augmented reaches the go-sdk's handler with its body as
// the client sent it, byte for byte (it was decoded and encoded again,
// which reorders and respaces it: red before), while a task-augmented one
// is rewritten to carry its intent's token.
func TestHTTPPlainCallPassesItsBody(t *testing.T) {
	g := New(Host{
		HasSession:  func(string) bool { return true },
		Owner:       func(*http.Request) string { return "o" },
		TaskSupport: func(string) string { return "" },
	}, resultstore.NewMemory(resultstore.Limits{}), Options{})
	var got []byte
	h := g.HTTP(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got, _ = io.ReadAll(r.Body)
		if r.ContentLength != int64(len(got)) {
			t.Errorf("Content-Length %d for a body of %d bytes", r.ContentLength, len(got))
		}
	}))
	post := func(body string) {
		r := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(body))
		r.Header.Set("Mcp-Session-Id", "s")
		h.ServeHTTP(httptest.NewRecorder(), r)
	}
	plain := `{ "params": {"name": "echo__echo", "arguments": {"message": "hello"}}, "id": 7, "method": "tools/call", "jsonrpc": "2.0" }`
	post(plain)
	if string(got) != plain {
		t.Errorf("a plain call reached the handler as\n%s\nwant it as sent\n%s", got, plain)
	}
	post(`{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"echo__echo","arguments":{},"task":{"ttl":1000}}}`)
	if !strings.Contains(string(got), taskMetaKey) || strings.Contains(string(got), `"task":`) {
		t.Errorf("a task-augmented call reached the handler as %s: want its task turned into an intent's token", got)
	}
}

// TestHTTPBoundaryReadsNoBodyAgain: the task boundary looks at a body the
// HTTP guard already read into memory (httpbody) where it lies: a plain
// call reaches the go-sdk's handler with that same body, unread. (Red
// before: the boundary read it again into a new buffer and replaced it.)
func TestHTTPBoundaryReadsNoBodyAgain(t *testing.T) {
	g := New(Host{
		HasSession:  func(string) bool { return true },
		Owner:       func(*http.Request) string { return "o" },
		TaskSupport: func(string) string { return "" },
	}, resultstore.NewMemory(resultstore.Limits{}), Options{})
	const plain = `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo__echo","arguments":{"message":"hello"}}}`
	body := httpbody.New([]byte(plain))
	var seen io.ReadCloser
	h := g.HTTP(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { seen = r.Body }))
	r := httptest.NewRequest(http.MethodPost, "/mcp", nil)
	r.Body = body
	r.Header.Set("Mcp-Session-Id", "s")
	h.ServeHTTP(httptest.NewRecorder(), r)
	if seen != io.ReadCloser(body) {
		t.Fatalf("the handler got a %T, not the body as read by the guard", seen)
	}
	if got := body.Unread(); string(got) != plain {
		t.Errorf("the body left for the handler: %q, want it whole", got)
	}
}
