package jsonrpcio

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// MaxDepth bounds the nesting of a message's JSON value, as the go-sdk's
// decoder does (its internal/json defaultMaxDepth).
const MaxDepth = 1000

// ErrFrameTooLarge is returned by [Reader.Read] when one message exceeds the
// reader's frame limit before it ends.
var ErrFrameTooLarge = errors.New("jsonrpcio: a JSON-RPC message exceeded the frame limit")

// readBufferSize is the size of a Reader's buffer: most messages fit in it
// whole, larger ones are gathered into the frame slice.
const readBufferSize = 64 << 10

// keptFrameCap is the largest gathering buffer a Reader keeps between
// messages.
const keptFrameCap = 4 * readBufferSize

// Reader reads JSON-RPC messages from a stream of newline-delimited JSON
// values. It is not safe for concurrent use: one goroutine reads.
type Reader struct {
	br       *bufio.Reader
	maxFrame int
	frame    []byte            // the value being gathered across reads
	queue    []jsonrpc.Message // the rest of a batch
	err      error             // sticky: after an error every Read returns it
	// skipOversized: a message over maxFrame is read to its end and dropped,
	// and reported as a *FrameTooLargeError that is not sticky
	// (Conn.RecoverOversized); else ErrFrameTooLarge ends the stream.
	skipOversized bool
}

// NewReader returns a Reader of r refusing messages larger than maxFrame
// bytes (no limit when maxFrame <= 0).
func NewReader(r io.Reader, maxFrame int) *Reader {
	return &Reader{br: bufio.NewReaderSize(r, readBufferSize), maxFrame: maxFrame}
}

// Read returns the next message, unpacking batches. The stream's end
// between messages is io.EOF; its end inside one is io.ErrUnexpectedEOF. A
// malformed message ends the stream: Read returns its error then and on
// every later call.
func (r *Reader) Read() (jsonrpc.Message, error) {
	if len(r.queue) > 0 {
		m := r.queue[0]
		r.queue = r.queue[1:]
		return m, nil
	}
	msgs, _, err := r.ReadFrame()
	if err != nil {
		return nil, err
	}
	r.queue = msgs[1:]
	return msgs[0], nil
}

// ReadFrame returns the messages of the next frame: one, or those of a
// batch (batch true). Errors are as Read's. Mixing ReadFrame and Read
// calls is not supported.
func (r *Reader) ReadFrame() (msgs []jsonrpc.Message, batch bool, err error) {
	if r.err != nil {
		return nil, false, r.err
	}
	frame, err := r.next()
	if err == nil {
		if msgs, batch, err = Decode(frame); err == nil {
			return msgs, batch, nil
		}
	}
	var skipped *FrameTooLargeError
	if errors.As(err, &skipped) {
		return nil, false, err // dropped whole: the stream goes on at the next message
	}
	r.err = err
	return nil, false, err
}

// next returns the next JSON value of the stream (valid only until the
// following call). A value must end its line: what follows it before the
// newline may only be white space.
func (r *Reader) next() ([]byte, error) {
	var s scanner
	if cap(r.frame) > keptFrameCap {
		r.frame = nil // a large message's buffer is not kept for the connection's life
	}
	r.frame = r.frame[:0]
	for {
		chunk, err := r.br.ReadSlice('\n')
		if len(chunk) > 0 {
			end, serr := s.scan(chunk)
			if serr != nil {
				return nil, serr
			}
			if n := end; r.maxFrame > 0 && s.started {
				if n < 0 {
					n = len(chunk)
				}
				if len(r.frame)+n > r.maxFrame {
					if r.skipOversized {
						return nil, r.skipRest(&s, chunk, end, err)
					}
					return nil, ErrFrameTooLarge
				}
			}
			if end >= 0 {
				if len(bytes.TrimSpace(chunk[end:])) != 0 {
					return nil, fmt.Errorf("jsonrpcio: invalid trailing data after a message")
				}
				if len(r.frame) == 0 {
					return chunk[:end], nil // the common case: a line read whole, no copy
				}
				r.frame = append(r.frame, chunk[:end]...)
				return r.frame, nil
			}
			if s.started {
				r.frame = append(r.frame, chunk...)
			}
		}
		switch {
		case err == nil || errors.Is(err, bufio.ErrBufferFull):
			continue
		case errors.Is(err, io.EOF) && s.started:
			return nil, io.ErrUnexpectedEOF
		default:
			return nil, err
		}
	}
}

// scanner finds where a JSON object or array ends in a stream of bytes
// given piece by piece. It checks nesting and strings only: the syntax is
// the decoder's to check.
type scanner struct {
	started  bool // the value's first byte has been seen
	scalar   bool // the value is not an object or array: it ends its line
	depth    int
	inString bool
	escaped  bool
}

// scan consumes b and returns the offset just past the value's end, or -1
// when the value goes on after b.
func (s *scanner) scan(b []byte) (int, error) {
	for i, c := range b {
		if !s.started {
			switch c {
			case ' ', '\t', '\r', '\n':
				continue
			case '{', '[':
				s.started = true
			default:
				s.started, s.scalar = true, true // not a message: the decoder says why
			}
		}
		if s.scalar {
			if c == '\n' {
				return i, nil
			}
			continue
		}
		if s.inString {
			switch {
			case s.escaped:
				s.escaped = false
			case c == '\\':
				s.escaped = true
			case c == '"':
				s.inString = false
			}
			continue
		}
		switch c {
		case '"':
			s.inString = true
		case '{', '[':
			s.depth++
			if s.depth > MaxDepth {
				return 0, fmt.Errorf("jsonrpcio: a message nests deeper than %d", MaxDepth)
			}
		case '}', ']':
			s.depth--
			if s.depth == 0 {
				return i + 1, nil
			}
		}
	}
	return -1, nil
}
