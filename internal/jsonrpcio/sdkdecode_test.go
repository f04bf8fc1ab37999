package jsonrpcio

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"reflect"
	"runtime"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	segjson "github.com/segmentio/encoding/json"
)

// bytesPerCall is the bytes the process allocates per call of f, over n
// calls.
func bytesPerCall(t *testing.T, n int, f func() error) uint64 {
	t.Helper()
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for range n {
		if err := f(); err != nil {
			t.Fatal(err)
		}
	}
	runtime.ReadMemStats(&after)
	return (after.TotalAlloc - before.TotalAlloc) / uint64(n)
}

// TestSDKDecodeAllocatesAboutItsInput: the go-sdk decodes every message,
// request's params and result through a segmentio json.Decoder over a
// bytes.Reader; segmentio/encoding v0.5.4's Decoder allocated a 32 KB
// buffer for each (96 % of the bytes a passthrough call allocated), and
// read a larger value by doubling its buffer. With
// third_party/segmentio-encoding (PATCHES.md) its first buffer is the
// reader's length. Red without the patch: ~66 KB per message (two
// decodes), ~33 KB per small result, 5 times the size of a 256 KB result.
func TestSDKDecodeAllocatesAboutItsInput(t *testing.T) {
	msg := []byte(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","arguments":{"message":"x"},"_meta":{"progressToken":3}}}`)
	if per := bytesPerCall(t, 200, func() error {
		_, err := jsonrpc.DecodeMessage(msg)
		return err
	}); per > 4096 {
		t.Errorf("the go-sdk allocated %d bytes per message decoded, want under 4 KB", per)
	}
	result := []byte(`{"content":[{"type":"text","text":"Echo: x"}],"structuredContent":{"echo":"x"}}`)
	if per := bytesPerCall(t, 200, func() error {
		var r mcp.CallToolResult
		return json.Unmarshal(result, &r)
	}); per > 4096 {
		t.Errorf("the go-sdk allocated %d bytes per tool result decoded, want under 4 KB", per)
	}
	// A 256 KB result: the copy the decoder reads into and the text
	// decoded from it, each once.
	text := strings.Repeat("y", 256<<10)
	large := []byte(`{"content":[{"type":"text","text":"` + text + `"}]}`)
	if per := bytesPerCall(t, 5, func() error {
		var r mcp.CallToolResult
		return json.Unmarshal(large, &r)
	}); per > uint64(len(large))*5/2 {
		t.Errorf("the go-sdk allocated %.1f times the size of a 256 KB result decoding it, want at most 2.5", float64(per)/float64(len(large)))
	}
}

// hideLen hides a reader's Len, so a Decoder over it reads as upstream's
// does, into its 32 KB buffer.
type hideLen struct{ r io.Reader }

func (h hideLen) Read(p []byte) (int, error) { return h.r.Read(p) }

// TestDecoderSizedByLenDecodesAlike: a Decoder over a reader that tells its
// length returns the same values and errors, value after value, as one over
// a reader that does not (upstream's path), for single values, streams,
// empty, truncated and invalid input, and input larger than the 32 KB
// buffer.
func TestDecoderSizedByLenDecodesAlike(t *testing.T) {
	big := `{"text":"` + strings.Repeat("y", 70_000) + `"}`
	inputs := []string{
		``,
		`   `,
		`1`,
		`12345`,
		`"s"`,
		`{"a":1}`,
		` {"a":[1,2,{"b":null}]} `,
		`{"a":1}{"b":2} 3 "x"`,
		"{\"a\":1}\n{\"b\":2}\n",
		`{"a":`,
		`{"a":1`,
		`[1,2`,
		`{"a":1}}`,
		`nul`,
		`{"a":1} {"b":`,
		big,
		big + ` ` + big,
	}
	decodeAll := func(r io.Reader) (vals []any, err error) {
		dec := segjson.NewDecoder(r)
		dec.DontMatchCaseInsensitiveStructFields()
		for range 10 {
			var v any
			if err := dec.Decode(&v); err != nil {
				return vals, err
			}
			vals = append(vals, v)
		}
		return vals, errors.New("more than 10 values")
	}
	for _, in := range inputs {
		for _, sized := range []io.Reader{bytes.NewReader([]byte(in)), strings.NewReader(in), bytes.NewBufferString(in)} {
			got, gotErr := decodeAll(sized)
			want, wantErr := decodeAll(hideLen{strings.NewReader(in)})
			name := in
			if len(name) > 40 {
				name = name[:40] + "…"
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("%q over %T: values %v, want %v", name, sized, got, want)
			}
			if (gotErr == nil) != (wantErr == nil) || (gotErr != nil && gotErr.Error() != wantErr.Error()) {
				t.Errorf("%q over %T: error %v, want %v", name, sized, gotErr, wantErr)
			}
		}
	}
}
