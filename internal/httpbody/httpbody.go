// Package httpbody holds a request body already read into memory, so that
// the HTTP layers after the one that read it (bounded, with a deadline)
// can look at its bytes without reading and copying it again.
package httpbody

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
)

// Body is a request body held in memory. It reads as the bytes it was
// made from; Unread returns what is left without consuming it.
type Body struct {
	data []byte
	r    bytes.Reader
}

// New returns a Body reading data (not copied: the caller no longer
// writes to it).
func New(data []byte) *Body {
	b := &Body{data: data}
	b.r.Reset(data)
	return b
}

// Read implements io.Reader.
func (b *Body) Read(p []byte) (int, error) { return b.r.Read(p) }

// Close implements io.Closer; there is nothing to release.
func (b *Body) Close() error { return nil }

// Unread returns the bytes not read yet, which the next Read still
// returns. The caller must not modify them.
func (b *Body) Unread() []byte { return b.data[len(b.data)-b.r.Len():] }

// Bytes returns the unread bytes of r's body: those of a Body in place,
// which r keeps as its body unchanged; any other body is read whole and
// replaced by a Body of its bytes.
func Bytes(r *http.Request) ([]byte, error) {
	if b, ok := r.Body.(*Body); ok {
		return b.Unread(), nil
	}
	data, err := io.ReadAll(r.Body)
	if err != nil {
		return nil, fmt.Errorf("reading request body: %w", err)
	}
	r.Body = New(data)
	return data, nil
}
