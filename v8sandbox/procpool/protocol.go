package procpool

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/isogate/isogate/internal/jsonscan"
	"github.com/isogate/isogate/v8sandbox"
)

// protocolVersion is checked by both sides in the init/ready handshake, so
// a worker built from another version of the binary is refused.
const protocolVersion = 6

// MaxFrameBytes is the largest frame either side accepts (length prefix
// excluded). A bigger frame from a worker is a protocol violation that kills
// that worker; a message that would be bigger is never sent (the job, host
// result or run result is refused with a typed error instead).
const MaxFrameBytes = 64 << 20

// Message types. Direction in brackets.
const (
	msgInit   = "init"   // [parent→worker] first frame: configuration
	msgReady  = "ready"  // [worker→parent] answer to init, once V8 is up
	msgRun    = "run"    // [parent→worker] start job under run id
	msgCancel = "cancel" // [parent→worker] the caller gave up on run id
	msgCall   = "call"   // [worker→parent] a host function call of run id
	msgReply  = "reply"  // [parent→worker] the outcome of a call
	msgResult = "result" // [worker→parent] the outcome of run id
	msgTaken  = "taken"  // [parent→worker] the caller has run id's result: prepare the next run
)

// message is the single JSON shape of every frame; Type says which fields
// are meaningful.
type message struct {
	Type string `json:"type"`
	// ID is the run id (run, cancel, call, reply, result).
	ID uint64 `json:"id,omitempty"`
	// Call is the call id, unique within a worker (call, reply).
	Call uint64 `json:"call,omitempty"`

	// init / ready
	Version int         `json:"version,omitempty"`
	Init    *initConfig `json:"init,omitempty"`
	PID     int         `json:"pid,omitempty"`
	// Confine is what confinement the worker obtained (ready).
	Confine *workerFacts `json:"confine,omitempty"`
	// CodeCache (ready, a checker worker's) is the code cache of the
	// compiler the worker made, before it parsed any program, when its
	// init carried none or V8 rejected it; CodeCacheLoaded reports that
	// V8 took the one its init carried.
	CodeCache       []byte `json:"code_cache,omitempty"`
	CodeCacheLoaded bool   `json:"code_cache_loaded,omitempty"`
	// Snapshot (ready) is the V8 startup snapshot the worker made before
	// it was given any run, when its init asked for it (snapshot.go).
	Snapshot []byte `json:"snapshot,omitempty"`
	// SnapshotLoaded reports that the worker's isolates start from the
	// snapshot its init carried.
	SnapshotLoaded bool `json:"snapshot_loaded,omitempty"`
	// Stamps (ready) are the phases of the worker's start (startstamps.go).
	Stamps []stamp `json:"stamps,omitempty"`

	// run: PreludeRef names the job's prelude; the job carries its text
	// only when the worker does not hold it yet (prelude.go).
	Job        *v8sandbox.Job `json:"job,omitempty"`
	PreludeRef string         `json:"prelude_ref,omitempty"`

	// call
	Name string          `json:"name,omitempty"`
	Args json.RawMessage `json:"args,omitempty"`

	// reply: a v8sandbox.HostReply, field for field: Value (absent means
	// undefined), Error (thrown into the script) or Fatal (ends the run).
	Value json.RawMessage      `json:"value,omitempty"`
	Error *v8sandbox.HostError `json:"error,omitempty"`
	Fatal *v8sandbox.Error     `json:"fatal,omitempty"`

	// result: Result on success, else Err.
	Result *v8sandbox.Result `json:"result,omitempty"`
	Err    *v8sandbox.Error  `json:"err,omitempty"`
}

// initConfig is what a worker needs to know; everything else (limits) comes
// with each job.
type initConfig struct {
	Slots        int `json:"slots"`
	RecycleAfter int `json:"recycle_after,omitempty"`
	// Checker makes the worker a checker worker: each run is answered by
	// the binary's CheckServer (checks.go), started before ready.
	Checker bool `json:"checker,omitempty"`
	// CodeCache is V8's code cache of the compiler for a checker worker,
	// which reads no file: the parent keeps it (Options.CheckerCache).
	// KeepCodeCache asks for the one the worker makes (ready).
	CodeCache     []byte `json:"code_cache,omitempty"`
	KeepCodeCache bool   `json:"keep_code_cache,omitempty"`
	// SnapshotBytes is the length of the V8 startup snapshot to start
	// isolates from, made by an earlier worker of the same command, which
	// follows the init frame as raw bytes (no JSON: 233 KB in base64 cost
	// a worker ~2 ms to decode); WantSnapshot asks for the one the worker
	// makes (ready). HeapMB is the heap limit of the isolate the worker
	// prepares before ready (snapshot.go).
	SnapshotBytes int  `json:"snapshot_bytes,omitempty"`
	WantSnapshot  bool `json:"want_snapshot,omitempty"`
	HeapMB        int  `json:"heap_mb,omitempty"`
	// StartupKey is the parent's v8sandbox.StartupKey when the worker is
	// the dedicated worker binary, which refuses to serve under another
	// key (workerbinary.go).
	StartupKey []byte `json:"startup_key,omitempty"`
}

// errFrameTooLarge is returned by encodeFrame for a message over MaxFrameBytes.
var errFrameTooLarge = errors.New("frame exceeds the maximum frame size")

// encodeFrame returns the length-prefixed JSON of m. HTML escaping is off so
// that JSON values (results, host data) cross the boundary byte for byte.
func encodeFrame(m *message) ([]byte, error) {
	var buf bytes.Buffer
	buf.Write([]byte{0, 0, 0, 0})
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(m); err != nil {
		return nil, err
	}
	b := buf.Bytes()
	return finishFrame(b[:len(b)-1]) // without Encode's trailing newline
}

// encodeCall returns the frame of a host call. It is built by hand: args is
// JSON already (the bootstrap serialized it), and encoding/json would scan
// and copy it once more (about 10 ms per MB). The parent validates every
// frame it reads.
func encodeCall(run, call uint64, c v8sandbox.HostCall) ([]byte, error) {
	name, err := json.Marshal(c.Name)
	if err != nil {
		return nil, err
	}
	b := make([]byte, 4, 4+64+len(name)+len(c.Args))
	b = append(b, `{"type":"call","id":`...)
	b = strconv.AppendUint(b, run, 10)
	b = append(b, `,"call":`...)
	b = strconv.AppendUint(b, call, 10)
	b = append(b, `,"name":`...)
	b = append(b, name...)
	if len(c.Args) > 0 {
		b = append(b, `,"args":`...)
		b = append(b, c.Args...)
	}
	return finishFrame(append(b, '}'))
}

// encodeReply returns the frame of a host call's reply. A value is copied
// as it is, without encoding/json's second scan (v8sandbox.Dispatch has
// validated it, or the host vouched for it: HostReply.Checked); an error or fatal reply goes through encodeFrame.
func encodeReply(run, call uint64, r v8sandbox.HostReply) ([]byte, error) {
	if r.Error != nil || r.Fatal != nil {
		return encodeFrame(&message{Type: msgReply, ID: run, Call: call, Error: r.Error, Fatal: r.Fatal}) // Value is meaningless then
	}
	b := make([]byte, 4, 4+64+len(r.Value))
	b = append(b, `{"type":"reply","id":`...)
	b = strconv.AppendUint(b, run, 10)
	b = append(b, `,"call":`...)
	b = strconv.AppendUint(b, call, 10)
	if len(r.Value) > 0 {
		b = append(b, `,"value":`...)
		b = append(b, r.Value...)
	}
	return finishFrame(append(b, '}'))
}

// encodeResult returns the frame of a run's successful result, built by
// hand like encodeCall: the value is JSON already (V8 serialized it), which
// encoding/json would scan and copy once more, as would the parent's
// decoding (about 16 ms per MB each). The parent validates it
// (decodeResult).
func encodeResult(run uint64, r *v8sandbox.Result) ([]byte, error) {
	b := make([]byte, 4, 4+96+len(r.Value))
	b = append(b, `{"type":"result","id":`...)
	b = strconv.AppendUint(b, run, 10)
	b = append(b, `,"result":{"host_calls":`...)
	b = strconv.AppendInt(b, int64(r.HostCalls), 10)
	b = append(b, `,"duration":`...)
	b = strconv.AppendInt(b, int64(r.Duration), 10)
	if len(r.Value) > 0 {
		b = append(b, `,"value":`...)
		b = append(b, r.Value...)
	}
	return finishFrame(append(b, '}', '}'))
}

// finishFrame fills in the length prefix of b (4 bytes, then the message).
func finishFrame(b []byte) ([]byte, error) {
	n := len(b) - 4
	if n > MaxFrameBytes {
		return nil, fmt.Errorf("%w (%d > %d bytes)", errFrameTooLarge, n, MaxFrameBytes)
	}
	binary.BigEndian.PutUint32(b, uint32(n))
	return b, nil
}

// frameReader reads frames from one stream.
type frameReader struct {
	r   *bufio.Reader
	max int
	// fromParent is set on a worker's reader: run, taken and value reply
	// frames skip encoding/json (decodeRun, decodeTaken,
	// decodeValueReply).
	fromParent bool
}

func newFrameReader(r io.Reader) *frameReader {
	return &frameReader{r: bufio.NewReaderSize(r, 64<<10), max: MaxFrameBytes}
}

// readRaw reads the n raw bytes that follow a frame (at most the frame
// limit).
func (fr *frameReader) readRaw(n int) ([]byte, error) {
	if n <= 0 || n > fr.max {
		return nil, fmt.Errorf("%w: raw payload of %d bytes (maximum %d)", errProtocol, n, fr.max)
	}
	b := make([]byte, n)
	if _, err := io.ReadFull(fr.r, b); err != nil {
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return nil, fmt.Errorf("truncated raw payload: %w", err)
	}
	return b, nil
}

// errProtocol marks a malformed frame (as opposed to the stream ending).
var errProtocol = errors.New("protocol violation")

// read returns the next message. io.EOF means the stream ended cleanly
// between frames and io.ErrUnexpectedEOF inside one (the peer died while
// writing); an error wrapping errProtocol means the peer is broken.
func (fr *frameReader) read() (*message, error) {
	var hdr [4]byte
	if _, err := io.ReadFull(fr.r, hdr[:]); err != nil {
		return nil, err // io.EOF between frames, io.ErrUnexpectedEOF inside the header
	}
	n := binary.BigEndian.Uint32(hdr[:])
	if n == 0 || int64(n) > int64(fr.max) {
		return nil, fmt.Errorf("%w: frame of %d bytes (maximum %d)", errProtocol, n, fr.max)
	}
	body := make([]byte, n)
	if _, err := io.ReadFull(fr.r, body); err != nil {
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return nil, fmt.Errorf("truncated frame body: %w", err)
	}
	if fr.fromParent {
		if m := decodeRun(body); m != nil {
			return m, nil
		} else if m := decodeTaken(body); m != nil {
			return m, nil
		} else if m := decodeValueReply(body); m != nil {
			return m, nil
		}
	} else if m := decodeCall(body); m != nil {
		return m, nil
	} else if m := decodeResult(body); m != nil {
		return m, nil
	}
	m := new(message)
	if err := json.Unmarshal(body, m); err != nil {
		return nil, fmt.Errorf("%w: frame is not a JSON message: %v", errProtocol, err)
	}
	return m, nil
}

// decodeValueReply decodes a reply frame exactly as encodeReply's hand-built
// path writes it, without encoding/json's scan and copy of the value (V8
// parses it next); nil for any other frame. Only a worker uses it: the
// parent is trusted, while the parent validates every frame it reads.
func decodeValueReply(body []byte) *message {
	m, rest := cutCallHeader(body, msgReply)
	if m == nil {
		return nil
	}
	value, ok := cutLastField(rest, `,"value":`, "}")
	if !ok {
		return nil
	}
	m.Value = value
	return m
}

// decodeCall decodes a call frame exactly as encodeCall writes it (a name
// without escapes), as encoding/json would, without its reflection: the
// frame a parent reads most. The arguments are checked to be one JSON
// value, as encoding/json checks them; anything else, or any other layout,
// gives nil and goes through encoding/json.
func decodeCall(body []byte) *message {
	m, rest := cutCallHeader(body, msgCall)
	if m == nil {
		return nil
	}
	rest, ok := bytes.CutPrefix(rest, []byte(`,"name":"`))
	if !ok {
		return nil
	}
	end := bytes.IndexByte(rest, '"')
	if end <= 0 {
		return nil
	}
	name := rest[:end]
	for _, c := range name {
		if c < 0x20 || c == '\\' {
			return nil
		}
	}
	if !utf8.Valid(name) {
		return nil // encoding/json would replace the bad bytes
	}
	m.Name, rest = string(name), rest[end+1:]
	args, ok := cutLastField(rest, `,"args":`, "}")
	if !ok || (args != nil && !oneValue(args)) {
		return nil
	}
	m.Args = args
	return m
}

// decodeResult decodes a result frame exactly as encodeResult writes it, as
// encoding/json would, without its reflection and its two scans of the
// value: the value is checked to be one JSON value (jsonscan.Valid, several
// times faster). Anything else gives nil and goes through encoding/json.
func decodeResult(body []byte) *message {
	id, rest := cutHeader(body, msgResult)
	if id == 0 {
		return nil
	}
	rest, ok := bytes.CutPrefix(rest, []byte(`,"result":{"host_calls":`))
	if !ok {
		return nil
	}
	calls, rest, ok := cutUint(rest)
	if !ok || calls > math.MaxInt {
		return nil
	}
	if rest, ok = bytes.CutPrefix(rest, []byte(`,"duration":`)); !ok {
		return nil
	}
	dur, rest, ok := cutUint(rest)
	if !ok || dur > math.MaxInt64 {
		return nil
	}
	value, ok := cutLastField(rest, `,"value":`, "}}")
	if !ok || (value != nil && !oneValue(value)) {
		return nil
	}
	return &message{Type: msgResult, ID: id, Result: &v8sandbox.Result{Value: value, HostCalls: int(calls), Duration: time.Duration(dur)}}
}

// cutLastField reads the end of a hand-built frame: closer alone (no value:
// nil), or field, a value and closer; false for any other ending. The value
// is not checked.
func cutLastField(rest []byte, field, closer string) (value []byte, ok bool) {
	if string(rest) == closer {
		return nil, true
	}
	value, ok = bytes.CutPrefix(rest, []byte(field))
	if !ok || len(value) <= len(closer) || !bytes.HasSuffix(value, []byte(closer)) {
		return nil, false
	}
	return value[:len(value)-len(closer)], true
}

// oneValue reports whether b is one JSON value without surrounding
// whitespace, as encoding/json leaves a json.RawMessage field.
func oneValue(b []byte) bool {
	return !isJSONSpace(b[0]) && !isJSONSpace(b[len(b)-1]) && jsonscan.Valid(b)
}

func isJSONSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// cutHeader reads the start every hand-built frame has,
// `{"type":"<typ>","id":<run>`, and returns the run id and what follows;
// id 0 when body starts otherwise.
func cutHeader(body []byte, typ string) (id uint64, rest []byte) {
	rest, ok := bytes.CutPrefix(body, []byte(`{"type":"`+typ+`","id":`))
	if !ok {
		return 0, nil
	}
	if id, rest, ok = cutUint(rest); !ok {
		return 0, nil
	}
	return id, rest
}

// cutCallHeader reads the start that encodeCall and encodeReply write,
// `{"type":"<typ>","id":<run>,"call":<call>`, into a message, and returns
// what follows; nil when body starts otherwise (or an id is 0).
func cutCallHeader(body []byte, typ string) (*message, []byte) {
	m := &message{Type: typ}
	var rest []byte
	if m.ID, rest = cutHeader(body, typ); m.ID == 0 {
		return nil, nil
	}
	rest, ok := bytes.CutPrefix(rest, []byte(`,"call":`))
	if !ok {
		return nil, nil
	}
	if m.Call, rest, ok = cutUint(rest); !ok || m.Call == 0 {
		return nil, nil
	}
	return m, rest
}

// cutUint reads the decimal number b starts with, and returns what follows;
// false when there is none, it overflows or has a leading zero (which JSON
// does not allow).
func cutUint(b []byte) (uint64, []byte, bool) {
	i := 0
	for i < len(b) && i < 20 && b[i] >= '0' && b[i] <= '9' {
		i++
	}
	n, err := strconv.ParseUint(string(b[:i]), 10, 64)
	if err != nil || (i > 1 && b[0] == '0') {
		return 0, b, false
	}
	return n, b[i:], true
}
