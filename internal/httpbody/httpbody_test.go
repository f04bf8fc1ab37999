package httpbody

import (
	"io"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestBytesOfABodyInMemory: the bytes of a Body are had without reading
// or copying it (no allocation), the request keeps the very same body,
// and a later reader still reads them all; a partly read Body gives what
// is left.
func TestBytesOfABodyInMemory(t *testing.T) {
	const text = `{"jsonrpc":"2.0","id":1,"method":"tools/call"}`
	r := httptest.NewRequest("POST", "/mcp", nil)
	body := New([]byte(text))
	r.Body = body
	if n := testing.AllocsPerRun(100, func() {
		got, err := Bytes(r)
		if err != nil || string(got) != text {
			t.Fatalf("Bytes: %q, %v", got, err)
		}
	}); n != 0 {
		t.Errorf("Bytes of a Body: %.0f allocations, want 0", n)
	}
	if r.Body != body {
		t.Fatalf("the request's body was replaced")
	}
	head := make([]byte, 10)
	if _, err := io.ReadFull(r.Body, head); err != nil {
		t.Fatal(err)
	}
	if got, _ := Bytes(r); string(got) != text[10:] {
		t.Errorf("after reading 10 bytes, Bytes = %q, want %q", got, text[10:])
	}
	if rest, _ := io.ReadAll(r.Body); string(rest) != text[10:] {
		t.Errorf("read after Bytes: %q, want %q", rest, text[10:])
	}
}

// TestBytesReadsAnyOtherBody: a body of another kind is read whole once
// and replaced by a Body of its bytes, which the next reader reads.
func TestBytesReadsAnyOtherBody(t *testing.T) {
	const text = `{"a":1}`
	r := httptest.NewRequest("POST", "/mcp", strings.NewReader(text))
	got, err := Bytes(r)
	if err != nil || string(got) != text {
		t.Fatalf("Bytes: %q, %v", got, err)
	}
	if _, ok := r.Body.(*Body); !ok {
		t.Fatalf("body is a %T, want a *Body", r.Body)
	}
	if again, _ := io.ReadAll(r.Body); string(again) != text {
		t.Errorf("read after Bytes: %q, want %q", again, text)
	}
}
