package jsonrpcio

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// TestConnAnswersABatchWithABatch: the responses to a batch's requests go
// out together, in the batch's order, once the last is written; a
// response to a request outside the batch goes out at once.
func TestConnAnswersABatchWithABatch(t *testing.T) {
	in := `[{"jsonrpc":"2.0","id":1,"method":"a"},{"jsonrpc":"2.0","method":"note"},{"jsonrpc":"2.0","id":"b","method":"b"}]` + "\n" +
		`{"jsonrpc":"2.0","id":3,"method":"c"}` + "\n"
	var out bytes.Buffer
	c := NewConn(strings.NewReader(in), &out, 0, func() error { return nil })
	ctx := context.Background()
	var ids []jsonrpc.ID
	for range 4 {
		m, err := c.Read(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if r, ok := m.(*jsonrpc.Request); ok && r.ID.IsValid() {
			ids = append(ids, r.ID)
		}
	}
	answer := func(id jsonrpc.ID) {
		t.Helper()
		if err := c.Write(ctx, &jsonrpc.Response{ID: id, Result: []byte(`{}`)}); err != nil {
			t.Fatal(err)
		}
	}
	answer(ids[1]) // "b" first
	answer(ids[2]) // 3: not in the batch
	if got := out.String(); got != `{"jsonrpc":"2.0","id":3,"result":{}}`+"\n" {
		t.Fatalf("before the batch is answered: %q", got)
	}
	out.Reset()
	answer(ids[0])
	if got := out.String(); got != `[{"jsonrpc":"2.0","id":1,"result":{}},{"jsonrpc":"2.0","id":"b","result":{}}]`+"\n" {
		t.Fatalf("batch answer: %q", got)
	}
}

// TestConnRefusesDuplicateIDsInABatch, as the go-sdk does: the stream ends.
func TestConnRefusesDuplicateIDsInABatch(t *testing.T) {
	in := `[{"jsonrpc":"2.0","id":1,"method":"a"},{"jsonrpc":"2.0","id":1,"method":"b"}]` + "\n"
	c := NewConn(strings.NewReader(in), io.Discard, 0, func() error { return nil })
	if _, err := c.Read(context.Background()); err == nil {
		t.Fatal("a batch with a duplicate id was read")
	}
}

// TestConnCloseEndsARead: closing a pipe in the poller ends a Read blocked
// on it with io.EOF, and Close is called once.
func TestConnCloseEndsARead(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	closes := 0
	c := NewConn(r, io.Discard, 0, func() error { closes++; return r.Close() })
	read := make(chan error, 1)
	go func() {
		_, err := c.Read(context.Background())
		read <- err
	}()
	if _, err := w.Write([]byte(`{"jsonrpc":"2.0",`)); err != nil { // half a message: the Read is blocked inside it
		t.Fatal(err)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if err := <-read; !errors.Is(err, io.EOF) {
		t.Fatalf("read: %v, want io.EOF", err)
	}
	if c.Close(); closes != 1 {
		t.Fatalf("close function called %d times", closes)
	}
}
