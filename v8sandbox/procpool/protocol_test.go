package procpool

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

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
		w := read(t, want)
		// As the parent reads it (encoding/json) and as a worker does
		// (decodeValueReply for a value reply).
		for _, fromParent := range []bool{false, true} {
			fr := newFrameReader(bytes.NewReader(got))
			fr.fromParent = fromParent
			g, err := fr.read()
			if err != nil {
				t.Fatal(err)
			}
			if !jsonEqual(g.Value, w.Value) {
				t.Errorf("reply value (fromParent %v): hand-built %s, encoded %s", fromParent, g.Value, w.Value)
			}
			if len(r.Value) > 0 && fromParent && string(g.Value) != string(r.Value) {
				t.Errorf("a worker's reply value is %s, not the bytes sent (%s)", g.Value, r.Value)
			}
			gv, wv := *g, *w
			gv.Value, wv.Value = nil, nil
			if !reflect.DeepEqual(gv, wv) {
				t.Errorf("reply (fromParent %v): hand-built %+v, encoded %+v", fromParent, gv, wv)
			}
		}
	}
	for _, body := range []string{`{"type":"reply","id":1,"call":2,"error":{"message":"m"}}`,
		`{"type":"reply","id":0,"call":2}`, `{"type":"reply","id":1,"call":x}`, `{"type":"result","id":1}`} {
		if m := decodeValueReply([]byte(body)); m != nil {
			t.Errorf("decodeValueReply(%s) = %+v, want nil (left to encoding/json)", body, m)
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

// BenchmarkResultFrame encodes (worker) and decodes (parent) the result
// frame of a run that returns 1 MB: by hand, and through encoding/json as
// before.
func BenchmarkResultFrame(b *testing.B) {
	v := json.RawMessage(`{"items":[` + strings.Repeat(`{"id":12345,"name":"some name here","tags":["a","b"]},`, 20000) + `{}]}`)
	res := &v8sandbox.Result{Value: v, HostCalls: 1, Duration: time.Millisecond}
	b.Run("hand-built", func(b *testing.B) {
		b.SetBytes(int64(len(v)))
		for b.Loop() {
			frame, err := encodeResult(7, res)
			if err != nil {
				b.Fatal(err)
			}
			if decodeResult(frame[4:]) == nil {
				b.Fatal("not decoded")
			}
		}
	})
	b.Run("encoding-json", func(b *testing.B) {
		b.SetBytes(int64(len(v)))
		for b.Loop() {
			frame, err := encodeFrame(&message{Type: msgResult, ID: 7, Result: res})
			if err != nil {
				b.Fatal(err)
			}
			if err := json.Unmarshal(frame[4:], new(message)); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// FuzzDecodeCall: the hand-built decoding of a call frame agrees with
// encoding/json whenever it decodes, and decodes what encodeCall writes.
func FuzzDecodeCall(f *testing.F) {
	for _, s := range []string{
		`{"type":"call","id":1,"call":2,"name":"echo","args":[1,"a",{"b":null}]}`,
		`{"type":"call","id":1,"call":2,"name":"echo"}`,
		`{"type":"call","id":1,"call":2,"name":"e\u00e9","args":[]}`,
		`{"type":"call","id":1,"call":2,"name":"e\"x","args":[]}`,
		`{"type":"call","id":1,"call":2,"name":"f","args":[1],"name":"g"}`,
		`{"type":"call","id":1,"call":2,"name":"f","args":[1] }`,
		`{"type":"call","id":1,"call":2,"name":"f","args":null}`,
		`{"type":"call","id":1,"call":2,"name":"f","args":[1,}`,
		`{"type":"call","id":0,"call":2,"name":"f"}`,
		`{"type":"call","id":01,"call":2,"name":"f"}`,
		"{\"type\":\"call\",\"id\":1,\"call\":2,\"name\":\"\xff\",\"args\":[]}",
		`{"type":"reply","id":1,"call":2,"value":3}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		got := decodeCall(body)
		if got == nil {
			return
		}
		want := new(message)
		if err := json.Unmarshal(body, want); err != nil {
			t.Fatalf("decoded %q, which encoding/json refuses: %v", body, err)
		}
		if got.Type != want.Type || got.ID != want.ID || got.Call != want.Call || got.Name != want.Name || string(got.Args) != string(want.Args) {
			t.Fatalf("%q: hand-built %+v, encoding/json %+v", body, got, want)
		}
	})
}

// What encodeCall writes, decodeCall reads back.
func TestDecodeCallReadsEncodeCall(t *testing.T) {
	for _, c := range []v8sandbox.HostCall{
		{Name: "echo", Args: json.RawMessage(`[1,{"a":"b"}]`)},
		{Name: "github.search_issues", Args: json.RawMessage(`[{"q":"x y"}]`)},
		{Name: "noargs"},
	} {
		frame, err := encodeCall(7, 9, c)
		if err != nil {
			t.Fatal(err)
		}
		m := decodeCall(frame[4:])
		if m == nil || m.ID != 7 || m.Call != 9 || m.Name != c.Name || string(m.Args) != string(c.Args) {
			t.Errorf("%+v: decoded %+v", c, m)
		}
	}
}

// decodeResult accepts only what encoding/json decodes the same way.
func FuzzDecodeResult(f *testing.F) {
	for _, s := range []string{
		`{"type":"result","id":1,"result":{"host_calls":0,"duration":1500,"value":{"a":[1,"x"]}}}`,
		`{"type":"result","id":1,"result":{"host_calls":3,"duration":0}}`,
		`{"type":"result","id":1,"result":{"host_calls":3,"duration":0,"value":"s"}}`,
		`{"type":"result","id":1,"result":{"host_calls":3,"duration":0,"value":[1,}}}`,
		`{"type":"result","id":1,"result":{"host_calls":3,"duration":0,"value":1 }}`,
		`{"type":"result","id":1,"result":{"host_calls":3,"duration":0,"value":1},"err":{}}`,
		`{"type":"result","id":1,"result":{"host_calls":-1,"duration":0}}`,
		`{"type":"result","id":0,"result":{"host_calls":1,"duration":0}}`,
		`{"type":"result","id":1,"result":{"host_calls":1,"duration":00}}`,
		`{"type":"result","id":1,"result":{"host_calls":99999999999999999999,"duration":0}}`,
		`{"type":"result","id":1,"result":{"host_calls":1,"duration":0,"value":1}}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		got := decodeResult(body)
		if got == nil {
			return
		}
		want := new(message)
		if err := json.Unmarshal(body, want); err != nil {
			t.Fatalf("decoded %q, which encoding/json refuses: %v", body, err)
		}
		if want.Result == nil || got.Type != want.Type || got.ID != want.ID || want.Err != nil ||
			got.Result.HostCalls != want.Result.HostCalls || got.Result.Duration != want.Result.Duration ||
			string(got.Result.Value) != string(want.Result.Value) {
			t.Fatalf("%q: hand-built %+v, encoding/json %+v", body, got, want)
		}
	})
}

// What encodeResult writes, decodeResult reads back.
func TestDecodeResultReadsEncodeResult(t *testing.T) {
	for _, r := range []v8sandbox.Result{
		{Value: json.RawMessage(`{"items":[{"id":1,"s":"a\"}}"}]}`), HostCalls: 2, Duration: 1234567},
		{Value: json.RawMessage(`"}}"`)},
		{HostCalls: 1},
	} {
		frame, err := encodeResult(7, &r)
		if err != nil {
			t.Fatal(err)
		}
		m := decodeResult(frame[4:])
		if m == nil || m.Type != msgResult || m.ID != 7 || m.Result == nil || string(m.Result.Value) != string(r.Value) ||
			m.Result.HostCalls != r.HostCalls || m.Result.Duration != r.Duration {
			t.Errorf("%+v: decoded %+v", r, m)
		}
	}
	// A value the worker got wrong is not taken as it is.
	if m := decodeResult([]byte(`{"type":"result","id":7,"result":{"host_calls":0,"duration":0,"value":{"a":}}}`)); m != nil {
		t.Errorf("an invalid value was decoded: %+v", m)
	}
}
