package jsonrpcio

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// readAll reads messages until an error and returns them with the error.
func readAll(r *Reader) ([]jsonrpc.Message, error) {
	var msgs []jsonrpc.Message
	for {
		m, err := r.Read()
		if err != nil {
			return msgs, err
		}
		msgs = append(msgs, m)
	}
}

// wire is a message's wire form, to compare messages.
func wire(t *testing.T, m jsonrpc.Message) string {
	t.Helper()
	data, err := jsonrpc.EncodeMessage(m)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// sdkCorpus holds messages and non-messages the go-sdk's decoder is
// compared with.
var sdkCorpus = []string{
	`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"message":"x"},"_meta":{"progressToken":3}}}`,
	`{"jsonrpc":"2.0","id":"abc","result":{"content":[{"type":"text","text":"{\"a\":\"}]\"}"}]}}`,
	`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"t","progress":1}}`,
	`{"jsonrpc":"2.0","id":7,"error":{"code":-32601,"message":"no such method","data":{"why":[1,2]}}}`,
	`{"jsonrpc":"2.0","id":8,"method":""}`,
	`{"jsonrpc":"2.0","id":9.0,"result":{}}`,
	`{"jsonrpc":"2.0","id":null,"method":"ping"}`,
	`{"jsonrpc":"2.0","result":{}}`,                   // a response without an id
	`{"jsonrpc":"1.0","id":1,"method":"ping"}`,        // wrong version
	`{"JSONRPC":"2.0","id":1,"method":"ping"}`,        // keys are case-sensitive
	`{"jsonrpc":"2.0","id":true,"method":"ping"}`,     // an id of the wrong type
	`{"jsonrpc":"2.0","id":1,"method":7}`,             // a method that is no string
	`{"jsonrpc":"2.0","id":1,"method":"p","params":}`, // invalid JSON
	`{"jsonrpc":"2.0","id":"\u00e9\ud83d\ude00","method":"tools/list","params":{"cursor":"\"}{"}}`,
}

// TestDecodeMessageMatchesTheSDK: every message the go-sdk decodes is
// decoded to the same message, and every one it refuses is refused.
func TestDecodeMessageMatchesTheSDK(t *testing.T) {
	for _, in := range sdkCorpus {
		want, wantErr := jsonrpc.DecodeMessage([]byte(in))
		got, err := DecodeMessage([]byte(in))
		if (err != nil) != (wantErr != nil) {
			t.Errorf("%s: error %v, the SDK's %v", in, err, wantErr)
			continue
		}
		if err != nil {
			continue
		}
		if fmt.Sprintf("%T", got) != fmt.Sprintf("%T", want) || wire(t, got) != wire(t, want) {
			t.Errorf("%s:\n got  %T %s\n want %T %s", in, got, wire(t, got), want, wire(t, want))
		}
		if req, ok := got.(*jsonrpc.Request); ok && req.ID != want.(*jsonrpc.Request).ID {
			t.Errorf("%s: id %v, the SDK's %v", in, req.ID, want.(*jsonrpc.Request).ID)
		}
	}
}

// TestReaderFraming reads streams the MCP stdio transport allows: messages
// one per line, with CRLF, blank lines, a pretty-printed one over several
// lines, strings holding braces, brackets and escaped quotes, and a batch.
func TestReaderFraming(t *testing.T) {
	stream := sdkCorpus[0] + "\n" +
		sdkCorpus[1] + "\r\n" +
		"\n  \n" +
		"{\n  \"jsonrpc\": \"2.0\",\n  \"id\": 2,\n  \"method\": \"ping\"\n}\n" +
		`[{"jsonrpc":"2.0","id":3,"method":"a"},{"jsonrpc":"2.0","method":"b"}]` + "\n" +
		sdkCorpus[2] // the last line without a newline
	var want []string
	for _, in := range []string{sdkCorpus[0], sdkCorpus[1], `{"jsonrpc":"2.0","id":2,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":3,"method":"a"}`, `{"jsonrpc":"2.0","method":"b"}`, sdkCorpus[2]} {
		m, err := jsonrpc.DecodeMessage([]byte(in))
		if err != nil {
			t.Fatal(err)
		}
		want = append(want, wire(t, m))
	}
	for name, r := range map[string]io.Reader{
		"whole":       strings.NewReader(stream),
		"byte a read": iotest.OneByteReader(strings.NewReader(stream)),
		"half reads":  iotest.HalfReader(strings.NewReader(stream)),
	} {
		msgs, err := readAll(NewReader(r, 0))
		if err != io.EOF {
			t.Errorf("%s: ended with %v, want io.EOF", name, err)
		}
		if len(msgs) != len(want) {
			t.Fatalf("%s: %d messages, want %d", name, len(msgs), len(want))
		}
		for i, m := range msgs {
			if got := wire(t, m); got != want[i] {
				t.Errorf("%s: message %d:\n got  %s\n want %s", name, i, got, want[i])
			}
		}
	}
}

// TestReaderLargeMessage reads a 3 MB result, many times the reader's
// buffer, read whole and a few bytes at a time, between two small
// messages, and keeps every byte.
func TestReaderLargeMessage(t *testing.T) {
	text := strings.Repeat(`{"k":"v\"}"} `, 3<<20/13)
	result, _ := json.Marshal(map[string]any{"content": []any{map[string]any{"type": "text", "text": text}}})
	big := `{"jsonrpc":"2.0","id":5,"result":` + string(result) + `}`
	stream := sdkCorpus[0] + "\n" + big + "\n" + sdkCorpus[2] + "\n"
	for name, r := range map[string]io.Reader{
		"whole":      strings.NewReader(stream),
		"half reads": iotest.HalfReader(strings.NewReader(stream)),
	} {
		msgs, err := readAll(NewReader(r, 8<<20))
		if err != io.EOF || len(msgs) != 3 {
			t.Fatalf("%s: %d messages, error %v", name, len(msgs), err)
		}
		resp, ok := msgs[1].(*jsonrpc.Response)
		if !ok || !bytes.Equal(resp.Result, result) {
			t.Fatalf("%s: the large result was not kept whole", name)
		}
		if _, ok := msgs[2].(*jsonrpc.Request); !ok {
			t.Fatalf("%s: the message after the large one is %T", name, msgs[2])
		}
	}
	// The buffer that gathered the large message is not kept once the next is read.
	r := NewReader(strings.NewReader(stream), 8<<20)
	for range 3 {
		if _, err := r.Read(); err != nil {
			t.Fatal(err)
		}
	}
	if cap(r.frame) > keptFrameCap {
		t.Fatalf("the reader keeps %d bytes after the large message", cap(r.frame))
	}
}

// TestReaderBadStreams: what ends a stream, and how.
func TestReaderBadStreams(t *testing.T) {
	deep := `{"jsonrpc":"2.0","id":1,"method":"m","params":` + strings.Repeat("[", MaxDepth) + strings.Repeat("]", MaxDepth) + "}\n"
	for _, tc := range []struct {
		name, stream string
		max          int
		good         int // messages read before the error
		want         func(error) bool
	}{
		{"EOF inside a message", sdkCorpus[0] + "\n" + `{"jsonrpc":"2.0","id":2,"meth`, 0, 1,
			func(err error) bool { return errors.Is(err, io.ErrUnexpectedEOF) }},
		{"EOF inside a multi-line message", "{\n\"jsonrpc\": \"2.0\",\n", 0, 0,
			func(err error) bool { return errors.Is(err, io.ErrUnexpectedEOF) }},
		{"invalid JSON", sdkCorpus[0] + "\n" + `{"jsonrpc":"2.0","id":2,"method":}` + "\n" + sdkCorpus[2] + "\n", 0, 1,
			func(err error) bool { return err != nil && err != io.EOF }},
		{"not a message", "hello\n" + sdkCorpus[0] + "\n", 0, 0,
			func(err error) bool { return err != nil && err != io.EOF }},
		{"two messages on a line", sdkCorpus[0] + sdkCorpus[2] + "\n", 0, 0,
			func(err error) bool { return err != nil && err != io.EOF }},
		{"an empty batch", "[]\n", 0, 0,
			func(err error) bool { return err != nil && err != io.EOF }},
		{"a message over the limit", sdkCorpus[2] + "\n" + sdkCorpus[0] + "\n", len(sdkCorpus[0]) - 10, 1,
			func(err error) bool { return errors.Is(err, ErrFrameTooLarge) }},
		{"nesting past MaxDepth", deep, 0, 0,
			func(err error) bool { return err != nil && err != io.EOF }},
	} {
		r := NewReader(iotest.HalfReader(strings.NewReader(tc.stream)), tc.max)
		msgs, err := readAll(r)
		if len(msgs) != tc.good || !tc.want(err) {
			t.Errorf("%s: %d messages then %v", tc.name, len(msgs), err)
			continue
		}
		if _, again := r.Read(); again == nil || again.Error() != err.Error() {
			t.Errorf("%s: read after the error: %v, want %v again", tc.name, again, err)
		}
	}
	// Nesting up to MaxDepth is a message.
	ok := `{"jsonrpc":"2.0","id":1,"method":"m","params":` + strings.Repeat("[", MaxDepth-1) + strings.Repeat("]", MaxDepth-1) + "}\n"
	if _, err := NewReader(strings.NewReader(ok), 0).Read(); err != nil {
		t.Errorf("nesting of %d: %v", MaxDepth, err)
	}
}

// TestEncode writes one line per message.
func TestEncode(t *testing.T) {
	m, err := jsonrpc.DecodeMessage([]byte(sdkCorpus[0]))
	if err != nil {
		t.Fatal(err)
	}
	data, err := Encode(m)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Count(data, []byte("\n")) != 1 || data[len(data)-1] != '\n' {
		t.Fatalf("not one line: %q", data)
	}
	back, err := NewReader(bytes.NewReader(data), 0).Read()
	if err != nil || wire(t, back) != wire(t, m) {
		t.Fatalf("round trip: %v %v", back, err)
	}
}
