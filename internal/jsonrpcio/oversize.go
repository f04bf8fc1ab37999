package jsonrpcio

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// FrameTooLargeError is a message over a Reader's frame limit that the
// Reader skipped (Reader.skipOversized): the stream goes on at the next
// message. It is ErrFrameTooLarge for errors.Is. ID and Method are the
// message's top-level "id" and "method", when it had them (a batch has
// neither).
type FrameTooLargeError struct {
	Limit  int        // the frame limit, in bytes
	Size   int        // the message's size, in bytes
	ID     jsonrpc.ID // invalid when the message had none that could be read
	Method string     // "" for a response or a batch
	Batch  bool       // the message was a JSON array
}

// Error says how large the message was and what the limit is.
func (e *FrameTooLargeError) Error() string {
	return fmt.Sprintf("a JSON-RPC message of %d bytes exceeds the %s limit of this connection", e.Size, byteSize(e.Limit))
}

// Is makes the error ErrFrameTooLarge.
func (e *FrameTooLargeError) Is(target error) bool { return target == ErrFrameTooLarge }

// Request reports whether the message was a request that awaits an
// answer: a method and an id.
func (e *FrameTooLargeError) Request() bool { return e.Method != "" && e.ID.IsValid() }

// byteSize renders n as "16 MiB" when it is a whole number of MiB or KiB.
func byteSize(n int) string {
	switch {
	case n > 0 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n > 0 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}

// skipRest reads and drops the rest of a message found too large: the
// bytes gathered so far (r.frame) and chunk, the current read, whose
// scanned end is end (-1: the message goes on) and whose read error is
// rerr. It returns a *FrameTooLargeError naming the message's id and
// method, or the error that ended the stream inside it.
func (r *Reader) skipRest(s *scanner, chunk []byte, end int, rerr error) error {
	var m members
	m.feed(r.frame)
	size := len(r.frame)
	r.frame = r.frame[:0]
	for {
		if end >= 0 {
			m.feed(chunk[:end])
			size += end
			if len(bytes.TrimSpace(chunk[end:])) != 0 {
				return fmt.Errorf("jsonrpcio: invalid trailing data after a message")
			}
			return m.tooLarge(r.maxFrame, size)
		}
		m.feed(chunk)
		size += len(chunk)
		switch {
		case rerr == nil || errors.Is(rerr, bufio.ErrBufferFull):
		case errors.Is(rerr, io.EOF):
			return io.ErrUnexpectedEOF
		default:
			return rerr
		}
		chunk, rerr = r.br.ReadSlice('\n')
		end = -1
		if len(chunk) > 0 {
			var serr error
			if end, serr = s.scan(chunk); serr != nil {
				return serr
			}
		}
	}
}

// maxMemberValue bounds the captured value of an "id" or "method".
const maxMemberValue = 256

// members follows a JSON object given piece by piece and keeps the raw
// values of its top-level "id" and "method" members (each at most
// maxMemberValue bytes), wherever they are in it: a client may put them
// after its large params.
type members struct {
	top               byte // the value's first byte
	depth             int
	inString, escaped bool
	state             int // memberKeyWanted, memberKey, memberColon, memberValue
	key               []byte
	cur               string // the member whose value is being captured, if any
	val               []byte
	id, method        []byte
}

const (
	memberKeyWanted = iota
	memberKey
	memberColon
	memberValue
)

// feed consumes b.
func (m *members) feed(b []byte) {
	for _, c := range b {
		if m.top == 0 {
			if c == ' ' || c == '\t' || c == '\r' || c == '\n' {
				continue
			}
			m.top = c
			if c == '{' {
				m.depth = 1
			}
			continue
		}
		if m.top != '{' || m.depth == 0 {
			return
		}
		capture := m.state == memberValue && m.depth == 1 && m.cur != ""
		if m.inString {
			switch {
			case m.escaped:
				m.escaped = false
			case c == '\\':
				m.escaped = true
			case c == '"':
				m.inString = false
				if m.state == memberKey && m.depth == 1 {
					m.state = memberColon
					continue
				}
			}
			if m.state == memberKey && m.depth == 1 {
				if len(m.key) <= len("method") {
					m.key = append(m.key, c)
				}
				continue
			}
		} else {
			switch c {
			case '"':
				m.inString = true
				if m.depth == 1 && m.state == memberKeyWanted {
					m.state, m.key = memberKey, m.key[:0]
					continue
				}
			case '{', '[':
				m.depth++
			case '}', ']':
				if m.depth--; m.depth == 0 {
					m.endValue()
					return
				}
			case ':':
				if m.depth == 1 && m.state == memberColon {
					m.state, m.cur, m.val = memberValue, "", m.val[:0]
					if k := string(m.key); k == "id" || k == "method" {
						m.cur = k
					}
					continue
				}
			case ',':
				if m.depth == 1 && m.state == memberValue {
					m.endValue()
					m.state = memberKeyWanted
					continue
				}
			}
		}
		if capture && len(m.val) <= maxMemberValue {
			m.val = append(m.val, c)
		}
	}
}

// endValue keeps the value just ended if it is the id's or the method's.
func (m *members) endValue() {
	if len(m.val) > maxMemberValue {
		return
	}
	switch m.cur {
	case "id":
		m.id = bytes.Clone(bytes.TrimSpace(m.val))
	case "method":
		m.method = bytes.Clone(bytes.TrimSpace(m.val))
	}
}

// tooLarge is the error for the message followed.
func (m *members) tooLarge(limit, size int) *FrameTooLargeError {
	e := &FrameTooLargeError{Limit: limit, Size: size, Batch: m.top == '['}
	var raw any
	if m.id != nil && json.Unmarshal(m.id, &raw) == nil {
		if id, err := jsonrpc.MakeID(raw); err == nil {
			e.ID = id
		}
	}
	if m.method != nil {
		_ = json.Unmarshal(m.method, &e.Method)
	}
	return e
}

// RecoverOversized makes c skip a message over its frame limit instead of
// ending: a request (a method and an id) is answered with a JSON-RPC
// Invalid Request error naming the limit, anything else (a notification,
// a response, a batch, whose ids cannot be known) is dropped; each is
// logged on logger (slog.Default() when nil). It suits a client-facing
// connection, whose client can go on; it returns c.
func (c *Conn) RecoverOversized(logger *slog.Logger) *Conn {
	if logger == nil {
		logger = slog.Default()
	}
	c.r.skipOversized, c.oversized = true, logger
	return c
}

// refuseOversized answers or drops a message skipped as too large.
func (c *Conn) refuseOversized(ctx context.Context, e *FrameTooLargeError) error {
	attrs := []any{"bytes", e.Size, "limit", e.Limit}
	if e.Method != "" {
		attrs = append(attrs, "method", e.Method)
	}
	if e.ID.IsValid() {
		attrs = append(attrs, "id", e.ID.Raw())
	}
	if !e.Request() {
		c.oversized.Warn("dropped a message that "+msgTail(e), attrs...)
		return nil
	}
	c.oversized.Warn("refused a request that "+msgTail(e), attrs...)
	return c.Write(ctx, &jsonrpc.Response{ID: e.ID, Error: &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest,
		Message: fmt.Sprintf("request too large: %d bytes exceeds the %s limit of a message on this stdio connection", e.Size, byteSize(e.Limit))}})
}

// msgTail is the log text after "a message that".
func msgTail(e *FrameTooLargeError) string {
	return fmt.Sprintf("exceeds the %s limit of a message on this connection", byteSize(e.Limit))
}
