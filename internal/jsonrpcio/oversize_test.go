package jsonrpcio

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"strconv"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// TestConnRecoversOversizedMessages: with RecoverOversized, a message over
// the frame limit is read to its end and skipped; a request is answered
// with an Invalid Request error for its id, wherever the id is in the
// message (the TypeScript SDK writes it after params) and whatever the
// params hold ("id" keys, quotes, escapes, brackets in strings); a
// notification, a response and a batch are dropped with a log line; the
// next message is read as usual. Without it, the stream ends.
func TestConnRecoversOversizedMessages(t *testing.T) {
	pad := strings.Repeat(`x\"}],{"id":9,`, 40)
	msgs := []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"p":"` + pad + `"}}`,
		`{"jsonrpc":"2.0","method":"tools/call","params":{"id":8,"p":"` + pad + `"},"id":"after"}`,
		`{"jsonrpc":"2.0","method":"notifications/progress","params":{"p":"` + pad + `"}}`,
		`{"jsonrpc":"2.0","id":5,"result":{"p":"` + pad + `"}}`,
		`[{"jsonrpc":"2.0","id":6,"method":"ping","params":{"p":"` + pad + `"}}]`,
		"{\"jsonrpc\":\"2.0\",\n\"id\": 2.0 ,\"method\":\"m\",\"params\":{\"p\":\"" + pad + "\"}}",
		`{"jsonrpc":"2.0","id":3,"method":"ping"}`,
	}
	in := strings.Join(msgs, "\n") + "\n"
	var out, logs bytes.Buffer
	c := NewConn(strings.NewReader(in), &out, 300, func() error { return nil }).
		RecoverOversized(slog.New(slog.NewTextHandler(&logs, nil)))
	m, err := c.Read(context.Background())
	if err != nil {
		t.Fatalf("read after oversized messages: %v\nlog:\n%s", err, logs.String())
	}
	if r, ok := m.(*jsonrpc.Request); !ok || r.Method != "ping" || r.ID.Raw() != int64(3) {
		t.Fatalf("next message: %#v", m)
	}
	answer := func(id string, msg string) string {
		return `{"jsonrpc":"2.0","id":` + id + `,"error":{"code":-32600,"message":"request too large: ` + strconv.Itoa(len(msg)) +
			` bytes exceeds the 300 bytes limit of a message on this stdio connection"}}` + "\n"
	}
	want := answer("1", msgs[0]) + answer(`"after"`, msgs[1]) + answer("2", msgs[5])
	if got := out.String(); got != want {
		t.Errorf("answers:\n%s\nwant:\n%s", got, want)
	}
	if n := strings.Count(logs.String(), "dropped a message that exceeds the 300 bytes limit"); n != 3 {
		t.Errorf("%d drops logged, want 3:\n%s", n, logs.String())
	}
	if _, err := c.Read(context.Background()); !errors.Is(err, io.EOF) {
		t.Errorf("at the end: %v", err)
	}

	// Without RecoverOversized: the stream ends at the first.
	c = NewConn(strings.NewReader(in), io.Discard, 300, func() error { return nil })
	if _, err := c.Read(context.Background()); !errors.Is(err, ErrFrameTooLarge) {
		t.Fatalf("without recovery: %v", err)
	}
	if _, err := c.Read(context.Background()); !errors.Is(err, ErrFrameTooLarge) {
		t.Fatalf("without recovery, the next read: %v", err)
	}
	// A stream that ends inside an oversized message ends the connection.
	c = NewConn(strings.NewReader(msgs[0][:400]), io.Discard, 300, func() error { return nil }).RecoverOversized(slog.New(slog.NewTextHandler(io.Discard, nil)))
	if _, err := c.Read(context.Background()); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("cut inside an oversized message: %v", err)
	}
}
