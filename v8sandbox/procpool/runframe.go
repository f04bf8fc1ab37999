package procpool

import (
	"bytes"
	"encoding/json"
	"math"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/isogate/isogate/v8sandbox"
)

// The frames a worker reads most, run and taken, are decoded without
// encoding/json's reflection: decoding a trivial job's run frame through
// it took ~18 µs, on the path of every run (a trivial run in a worker
// takes ~50 µs). The parent writes them with encodeFrame (run) and
// takenFrame; decodeRun reads exactly encodeFrame's layout of a run
// message, and any other layout goes through encoding/json as before.

// takenFrame tells a worker that run id's result reached its caller. It
// is built by hand, byte for byte what encodeFrame writes for it.
func takenFrame(id uint64) []byte {
	b := make([]byte, 4, 4+32)
	b = append(b, `{"type":"taken","id":`...)
	b = strconv.AppendUint(b, id, 10)
	f, _ := finishFrame(append(b, '}')) // cannot fail: a few bytes
	return f
}

// decodeTaken decodes a taken frame as takenFrame writes it; nil for any
// other frame.
func decodeTaken(body []byte) *message {
	id, rest := cutHeader(body, msgTaken)
	if id == 0 || string(rest) != "}" {
		return nil
	}
	return &message{Type: msgTaken, ID: id}
}

// decodeRun decodes a run frame as encodeFrame writes it, into what
// encoding/json would make of it; nil for any other layout (a field out
// of its order, whitespace, a negative or fractional number), which
// encoding/json then decodes.
//
//	{"type":"run","id":N,"job":JOB[,"prelude_ref":S]}
//	JOB = {"source":S[,"origin":S][,"prelude":S][,"functions":[F,…]][,"await_result":true],"limits":L}
//	F   = {"name":S[,"async":true]}
//	L   = {["timeout":N][,"heap_mb":N][,"array_buffer_mb":N][,"max_result_bytes":N]}  (commas between)
func decodeRun(body []byte) *message {
	id, rest := cutHeader(body, msgRun)
	if id == 0 {
		return nil
	}
	c := &cursor{b: rest, ok: true}
	job := new(v8sandbox.Job)
	c.lit(`,"job":{"source":`)
	job.Source = c.str()
	if c.opt(`,"origin":`) {
		job.Origin = c.str()
	}
	if c.opt(`,"prelude":`) {
		job.Prelude = c.str()
	}
	if c.opt(`,"functions":[`) {
		for c.ok {
			var f v8sandbox.Function
			c.lit(`{"name":`)
			f.Name = c.str()
			f.Async = c.opt(`,"async":true`)
			c.lit(`}`)
			job.Functions = append(job.Functions, f)
			if !c.opt(`,`) {
				break
			}
		}
		c.lit(`]`)
	}
	job.AwaitResult = c.opt(`,"await_result":true`)
	c.lit(`,"limits":{`)
	sep := ""
	field := func(name string) (int64, bool) {
		if !c.opt(sep + `"` + name + `":`) {
			return 0, false
		}
		sep = ","
		return c.int(), true
	}
	if n, ok := field("timeout"); ok {
		job.Limits.Timeout = time.Duration(n)
	}
	if n, ok := field("heap_mb"); ok {
		job.Limits.HeapMB = int(n)
	}
	if n, ok := field("array_buffer_mb"); ok {
		job.Limits.ArrayBufferMB = int(n)
	}
	if n, ok := field("max_result_bytes"); ok {
		job.Limits.MaxResultBytes = int(n)
	}
	c.lit(`}}`)
	m := &message{Type: msgRun, ID: id, Job: job}
	if c.opt(`,"prelude_ref":`) {
		m.PreludeRef = c.str()
	}
	c.lit(`}`)
	if !c.ok || len(c.b) != 0 {
		return nil
	}
	return m
}

// cursor reads a hand-laid-out JSON text from the front of b. ok turns
// false at the first thing it does not expect, and stays false.
type cursor struct {
	b  []byte
	ok bool
}

// lit consumes s, which must come next.
func (c *cursor) lit(s string) {
	if !c.opt(s) {
		c.ok = false
	}
}

// opt consumes s when it comes next and says whether it did.
func (c *cursor) opt(s string) bool {
	if !c.ok || !bytes.HasPrefix(c.b, []byte(s)) {
		return false
	}
	c.b = c.b[len(s):]
	return true
}

// int consumes a non-negative integer that fits an int64 (encodeFrame
// writes time.Duration and int fields so).
func (c *cursor) int() int64 {
	if !c.ok {
		return 0
	}
	n, rest, ok := cutUint(c.b)
	if !ok || n > math.MaxInt64 || (n > math.MaxInt && strconv.IntSize == 32) {
		c.ok = false
		return 0
	}
	c.b = rest
	return int64(n)
}

// str consumes a JSON string and returns its value: the bytes themselves
// when it has no escape (and is valid UTF-8, control characters excluded,
// as encoding/json writes it), else what encoding/json makes of it.
func (c *cursor) str() string {
	if !c.ok || len(c.b) == 0 || c.b[0] != '"' {
		c.ok = false
		return ""
	}
	plain := true
	for i := 1; i < len(c.b); i++ {
		switch ch := c.b[i]; {
		case ch == '\\':
			plain = false
			i++ // the escaped character, never the closing quote
		case ch < 0x20:
			c.ok = false
			return ""
		case ch == '"':
			raw := c.b[:i+1]
			c.b = c.b[i+1:]
			if plain && utf8.Valid(raw) {
				return string(raw[1:i])
			}
			var s string
			if json.Unmarshal(raw, &s) != nil {
				c.ok = false
			}
			return s
		}
	}
	c.ok = false // no closing quote
	return ""
}
