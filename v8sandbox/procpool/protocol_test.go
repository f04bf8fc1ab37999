package procpool

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/isogate/isogate/v8sandbox"
)

// The hand-built call and reply frames read back exactly as the frames
// encoding/json makes for the same messages.
func TestHandBuiltFramesReadLikeEncodedOnes(t *testing.T) {
	read := func(t *testing.T, frame []byte) *message {
		t.Helper()
		m, err := newFrameReader(bytes.NewReader(frame)).read()
		if err != nil {
			t.Fatalf("reading %q: %v", frame, err)
		}
		return m
	}
	for _, c := range []v8sandbox.HostCall{
		{Name: "api.echo", Args: json.RawMessage(`["a",{"b":[1,2]},null]`)},
		{Name: `we"ird<>&\name é`, Args: json.RawMessage(`[ "\u2028", 1e3 ]`)},
		{Name: "noargs"},
	} {
		got, err := encodeCall(7, 9, c)
		if err != nil {
			t.Fatal(err)
		}
		want, _ := encodeFrame(&message{Type: msgCall, ID: 7, Call: 9, Name: c.Name, Args: c.Args})
		g, w := read(t, got), read(t, want)
		if g.Type != w.Type || g.ID != w.ID || g.Call != w.Call || g.Name != w.Name || !jsonEqual(g.Args, w.Args) {
			t.Errorf("call %q: hand-built %+v, encoded %+v", c.Name, g, w)
		}
	}
	for _, r := range []v8sandbox.HostReply{
		{Value: json.RawMessage(`{"items":[1,"<b>&</b>",{"x":null}]}`)},
		{},
		{Error: &v8sandbox.HostError{Name: "E", Code: "TOOL_DENIED", Message: "no", Data: json.RawMessage(`{"t":1}`)}},
		{Fatal: v8sandbox.Errorf(v8sandbox.CodeOutputLimit, "too much")},
	} {
		got, err := encodeReply(3, 4, r)
		if err != nil {
			t.Fatal(err)
		}
		want, _ := encodeFrame(&message{Type: msgReply, ID: 3, Call: 4, Value: r.Value, Error: r.Error, Fatal: r.Fatal})
		g, w := read(t, got), read(t, want)
		if !jsonEqual(g.Value, w.Value) {
			t.Errorf("reply value: hand-built %s, encoded %s", g.Value, w.Value)
		}
		g.Value, w.Value = nil, nil
		if !reflect.DeepEqual(g, w) {
			t.Errorf("reply: hand-built %+v, encoded %+v", g, w)
		}
	}
	big := json.RawMessage(`"` + strings.Repeat("x", MaxFrameBytes) + `"`)
	if _, err := encodeReply(1, 1, v8sandbox.HostReply{Value: big}); !errors.Is(err, errFrameTooLarge) {
		t.Fatalf("oversized reply: %v", err)
	}
	if _, err := encodeCall(1, 1, v8sandbox.HostCall{Name: "f", Args: big}); !errors.Is(err, errFrameTooLarge) {
		t.Fatalf("oversized call: %v", err)
	}
}

// jsonEqual compares two JSON texts by value (nil and empty are equal).
func jsonEqual(a, b json.RawMessage) bool {
	if len(a) == 0 || len(b) == 0 {
		return len(a) == len(b)
	}
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	return reflect.DeepEqual(x, y)
}

// BenchmarkReplyFrame encodes the reply frame of a 1 MB tool result: by
// hand, and through encoding/json as before.
func BenchmarkReplyFrame(b *testing.B) {
	v := json.RawMessage(`{"items":[` + strings.Repeat(`{"id":12345,"name":"some name here","tags":["a","b"]},`, 20000) + `{}]}`)
	b.Run("hand-built", func(b *testing.B) {
		b.SetBytes(int64(len(v)))
		for b.Loop() {
			if _, err := encodeReply(7, 9, v8sandbox.HostReply{Value: v}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("encoding-json", func(b *testing.B) {
		b.SetBytes(int64(len(v)))
		for b.Loop() {
			if _, err := encodeFrame(&message{Type: msgReply, ID: 7, Call: 9, Value: v}); err != nil {
				b.Fatal(err)
			}
		}
	})
}
