package jsonrpcio

import (
	"context"
	"io"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// nopWriter is the write side of a benchmark stream: discarded.
type nopWriter struct{ io.Writer }

func (nopWriter) Close() error { return nil }

// repeater reads msg over and over, a chunk of whole copies per Read.
type repeater struct {
	msg string
	off int // into msg
}

func (r *repeater) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		c := copy(p[n:], r.msg[r.off:])
		n += c
		r.off = (r.off + c) % len(r.msg)
	}
	return n, nil
}

// BenchmarkReadMessage reads one echo result (a server-everything reply)
// per iteration through the go-sdk's stdio connection (mcp.IOTransport:
// a reader goroutine, a channel, the SDK's decoder) and through a Reader,
// from the same in-memory stream.
//
//	go test -run '^$' -bench ReadMessage -benchmem ./internal/jsonrpcio/
func BenchmarkReadMessage(b *testing.B) {
	const msg = `{"result":{"content":[{"type":"text","text":"Echo: x"}]},"jsonrpc":"2.0","id":697}` + "\n"
	stream := func(*testing.B) io.Reader { return &repeater{msg: msg} }
	b.Run("go-sdk", func(b *testing.B) {
		conn, err := (&mcp.IOTransport{Reader: io.NopCloser(stream(b)), Writer: nopWriter{io.Discard}}).Connect(context.Background())
		if err != nil {
			b.Fatal(err)
		}
		defer conn.Close()
		b.ReportAllocs()
		for b.Loop() {
			if _, err := conn.Read(context.Background()); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("jsonrpcio", func(b *testing.B) {
		r := NewReader(stream(b), 0)
		b.ReportAllocs()
		for b.Loop() {
			if _, err := r.Read(); err != nil {
				b.Fatal(err)
			}
		}
	})
}
