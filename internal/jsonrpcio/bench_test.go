package jsonrpcio

import (
	"context"
	"encoding/json"
	"io"
	"strings"
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

// BenchmarkReadMessage reads one tool result per iteration, an echo (a
// server-everything reply) and a 1 MB text, through the go-sdk's stdio
// connection (mcp.IOTransport: a reader goroutine, a channel, the SDK's
// decoder) and through a Reader, from the same in-memory stream.
//
//	go test -run '^$' -bench ReadMessage -benchmem ./internal/jsonrpcio/
func BenchmarkReadMessage(b *testing.B) {
	big, _ := json.Marshal(strings.Repeat("0123456789abcdef", 1<<16))
	for _, m := range []struct{ name, msg string }{
		{"echo", `{"result":{"content":[{"type":"text","text":"Echo: x"}]},"jsonrpc":"2.0","id":697}` + "\n"},
		{"1MB", `{"result":{"content":[{"type":"text","text":` + string(big) + `}]},"jsonrpc":"2.0","id":698}` + "\n"},
	} {
		b.Run(m.name+"/go-sdk", func(b *testing.B) {
			conn, err := (&mcp.IOTransport{Reader: io.NopCloser(&repeater{msg: m.msg}), Writer: nopWriter{io.Discard}}).Connect(context.Background())
			if err != nil {
				b.Fatal(err)
			}
			defer conn.Close()
			b.ReportAllocs()
			b.SetBytes(int64(len(m.msg)))
			for b.Loop() {
				if _, err := conn.Read(context.Background()); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(m.name+"/jsonrpcio", func(b *testing.B) {
			r := NewReader(&repeater{msg: m.msg}, 0)
			b.ReportAllocs()
			b.SetBytes(int64(len(m.msg)))
			for b.Loop() {
				if _, err := r.Read(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
