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

// The frames a worker reads most, run and taken, are written and decoded
// without encoding/json's reflection: decoding a trivial job's run frame
// through it took ~18 µs, on the path of every run (a trivial run in a
// worker takes ~50 µs). encodeRun and takenFrame write byte for byte what
// encodeFrame would; decodeRun reads exactly that layout of a run message,
// and any other layout goes through encoding/json as before.

// encodeRun returns the frame of run id with job (whose prelude text it
// carries when not empty) and prelude reference ref, byte for byte what
// encodeFrame writes for that message.
func encodeRun(id uint64, job *v8sandbox.Job, ref string) ([]byte, error) {
	if id == 0 {
		return encodeFrame(&message{Type: msgRun, ID: id, Job: job, PreludeRef: ref})
	}
	b := make([]byte, 4, 4+160+len(job.Source)+len(job.Prelude))
	b = append(b, `{"type":"run","id":`...)
	b = strconv.AppendUint(b, id, 10)
	b = append(b, `,"job":{"source":`...)
	b = appendJSONString(b, job.Source)
	if job.Origin != "" {
		b = appendJSONString(append(b, `,"origin":`...), job.Origin)
	}
	if job.Prelude != "" {
		b = appendJSONString(append(b, `,"prelude":`...), job.Prelude)
	}
	for i, f := range job.Functions {
		if i == 0 {
			b = append(b, `,"functions":[`...)
		} else {
			b = append(b, ',')
		}
		b = appendJSONString(append(b, `{"name":`...), f.Name)
		if f.Async {
			b = append(b, `,"async":true`...)
		}
		b = append(b, '}')
	}
	if len(job.Functions) > 0 {
		b = append(b, ']')
	}
	if job.AwaitResult {
		b = append(b, `,"await_result":true`...)
	}
	b = append(b, `,"limits":{`...)
	sep := ""
	for _, l := range []struct {
		name string
		n    int64
	}{{"timeout", int64(job.Limits.Timeout)}, {"heap_mb", int64(job.Limits.HeapMB)},
		{"array_buffer_mb", int64(job.Limits.ArrayBufferMB)}, {"max_result_bytes", int64(job.Limits.MaxResultBytes)}} {
		if l.n != 0 {
			b = append(b, sep+`"`+l.name+`":`...)
			b = strconv.AppendInt(b, l.n, 10)
			sep = ","
		}
	}
	b = append(b, '}', '}')
	if ref != "" {
		b = appendJSONString(append(b, `,"prelude_ref":`...), ref)
	}
	return finishFrame(append(b, '}'))
}

// appendJSONString appends s as encoding/json writes it (HTML escaping
// off): as it is when it is printable ASCII without a quote or backslash,
// through encoding/json otherwise.
func appendJSONString(b []byte, s string) []byte {
	plain := true
	for i := 0; i < len(s) && plain; i++ {
		plain = s[i] >= 0x20 && s[i] < 0x7f && s[i] != '"' && s[i] != '\\'
	}
	if plain {
		b = append(b, '"')
		b = append(b, s...)
		return append(b, '"')
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // a string always encodes
	return append(b, bytes.TrimSuffix(buf.Bytes(), []byte("\n"))...)
}

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
