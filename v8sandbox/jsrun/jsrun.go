// Package jsrun implements the `isogate jsrun` contract: one JSON request on
// stdin, a deny-by-default script that may only call emit(s) and
// read_input(), and one JSON answer on stdout or stderr.
//
// Request:
//
//	{"source": "...", "input": "...", "limits": {"wall_ms": 1000, "output_kb": 64, "heap_mb": 64}}
//
// Success writes {"output":"…"} to stdout. Failure writes
// {"code":"…","message":"…"} to stderr and exits with [ExitCode] of the code;
// on OUTPUT_LIMIT stdout still carries the output cut to the limit.
package jsrun

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/isogate/isogate/internal/textcut"
	"github.com/isogate/isogate/v8sandbox"
)

// CodeInvalidRequest is the error code for stdin that is not a valid request.
const CodeInvalidRequest v8sandbox.Code = "INVALID_REQUEST"

// Defaults of the request limits.
const (
	DefaultWallMS   = 1000
	DefaultOutputKB = 64
	DefaultHeapMB   = 64
)

// Upper bounds of the request limits: larger values are refused with
// INVALID_REQUEST rather than overflowing a duration or a buffer size (a
// wall_ms that overflows time.Duration would disable the deadline).
const (
	MaxWallMS   = 600_000 // 10 minutes
	MaxOutputKB = 65_536  // 64 MiB
	MaxHeapMB   = 4_096
)

// Request is a decoded jsrun request.
type Request struct {
	Source string
	Input  string
	Limits Limits
}

// Limits are the request's limits, defaults applied.
type Limits struct {
	WallMS   int `json:"wall_ms"`
	OutputKB int `json:"output_kb"`
	HeapMB   int `json:"heap_mb"`
}

// ParseRequest decodes and validates a request. Its error is an
// *v8sandbox.Error with code INVALID_REQUEST.
func ParseRequest(data []byte) (Request, error) {
	var raw struct {
		Source *string `json:"source"`
		Input  *string `json:"input"`
		Limits *struct {
			WallMS   *int `json:"wall_ms"`
			OutputKB *int `json:"output_kb"`
			HeapMB   *int `json:"heap_mb"`
		} `json:"limits"`
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&raw); err != nil {
		return Request{}, invalid("request is not a valid JSON object: %v", err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return Request{}, invalid("unexpected data after the request object")
	}
	if raw.Source == nil {
		return Request{}, invalid(`"source" (string) is required`)
	}
	if raw.Input == nil {
		return Request{}, invalid(`"input" (string) is required`)
	}
	if i := strings.IndexByte(*raw.Source, 0); i >= 0 {
		// V8 would read the source as a C string and silently drop
		// everything from the NUL on.
		return Request{}, invalid(`"source" contains a NUL character at byte %d`, i)
	}
	req := Request{Source: *raw.Source, Input: *raw.Input,
		Limits: Limits{WallMS: DefaultWallMS, OutputKB: DefaultOutputKB, HeapMB: DefaultHeapMB}}
	if l := raw.Limits; l != nil {
		for _, f := range []struct {
			name string
			src  *int
			dst  *int
			min  int
			max  int
		}{
			{"wall_ms", l.WallMS, &req.Limits.WallMS, 1, MaxWallMS},
			{"output_kb", l.OutputKB, &req.Limits.OutputKB, 1, MaxOutputKB},
			{"heap_mb", l.HeapMB, &req.Limits.HeapMB, 8, MaxHeapMB},
		} {
			if f.src == nil {
				continue
			}
			if *f.src < f.min || *f.src > f.max {
				return Request{}, invalid(`"limits.%s" must be an integer from %d to %d (got %d)`, f.name, f.min, f.max, *f.src)
			}
			*f.dst = *f.src
		}
	}
	return req, nil
}

func invalid(format string, args ...any) *v8sandbox.Error {
	return v8sandbox.Errorf(CodeInvalidRequest, format, args...)
}

// prelude turns the raw emit host function into emit(s) = append String(s).
const prelude = `((raw) => { globalThis.emit = function emit(s) { raw(String(s)); }; })(globalThis.emit);`

// Run executes req and returns the output buffer. On OUTPUT_LIMIT the
// output holds exactly the bytes that fit, cut on a UTF-8 boundary, and the
// error is returned alongside it; on other errors the output is empty.
func Run(ctx context.Context, runner v8sandbox.Runner, req Request) (string, error) {
	out := &outputBuffer{limit: req.Limits.OutputKB * 1024, limitKB: req.Limits.OutputKB}
	inputJSON, err := json.Marshal(req.Input)
	if err != nil {
		return "", fmt.Errorf("encoding input: %w", err)
	}
	host := new(v8sandbox.Table).
		Sync("emit", func(_ context.Context, args json.RawMessage) (json.RawMessage, error) {
			var parts []string
			if err := json.Unmarshal(args, &parts); err != nil || len(parts) != 1 {
				return nil, fmt.Errorf("emit expects one string")
			}
			return nil, out.write(parts[0]) // OUTPUT_LIMIT ends the run
		}).
		Sync("read_input", func(context.Context, json.RawMessage) (json.RawMessage, error) { return inputJSON, nil })
	job := v8sandbox.Job{
		Source:    req.Source,
		Prelude:   prelude,
		Functions: host.Functions(),
		Limits: v8sandbox.Limits{
			Timeout:       time.Duration(req.Limits.WallMS) * time.Millisecond,
			HeapMB:        req.Limits.HeapMB,
			ArrayBufferMB: req.Limits.HeapMB,
		},
	}
	_, err = runner.Run(ctx, job, host)
	if err != nil {
		if v8sandbox.CodeOf(err) == v8sandbox.CodeOutputLimit {
			return out.String(), err
		}
		return "", err
	}
	return out.String(), nil
}

// outputBuffer collects emitted text up to a byte limit.
type outputBuffer struct {
	mu      sync.Mutex
	b       strings.Builder
	limit   int
	limitKB int
}

func (o *outputBuffer) write(s string) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	room := o.limit - o.b.Len()
	if len(s) <= room {
		o.b.WriteString(s)
		return nil
	}
	o.b.WriteString(textcut.Prefix(s, room))
	o.limit = o.b.Len() // nothing more fits
	return v8sandbox.Errorf(v8sandbox.CodeOutputLimit, "output exceeded %d KB", o.limitKB)
}

func (o *outputBuffer) String() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.b.String()
}

// ExitCode is the process exit code for an error code; 0 for success.
func ExitCode(code v8sandbox.Code) int {
	switch code {
	case "":
		return 0
	case CodeInvalidRequest:
		return 2
	case v8sandbox.CodeEval:
		return 3
	case v8sandbox.CodeTimeout:
		return 4
	case v8sandbox.CodeOutputLimit:
		return 5
	case v8sandbox.CodeHeapLimit:
		return 6
	case v8sandbox.CodeCancelled:
		return 7
	case v8sandbox.CodeSandboxCrashed:
		return 8
	default: // INTERNAL and anything unexpected
		return 1
	}
}

// Main runs the whole contract on the given streams and returns the exit code.
func Main(ctx context.Context, runner v8sandbox.Runner, stdin io.Reader, stdout, stderr io.Writer) int {
	data, err := io.ReadAll(stdin)
	if err != nil {
		return Fail(stderr, invalid("reading stdin: %v", err))
	}
	req, err := ParseRequest(data)
	if err != nil {
		return Fail(stderr, err)
	}
	output, err := Run(ctx, runner, req)
	if err == nil || v8sandbox.CodeOf(err) == v8sandbox.CodeOutputLimit {
		enc := json.NewEncoder(stdout)
		enc.SetEscapeHTML(false)
		_ = enc.Encode(struct {
			Output string `json:"output"`
		}{output})
	}
	if err != nil {
		return Fail(stderr, err)
	}
	return 0
}

// Fail writes err to stderr as the contract's one-line JSON error and
// returns the exit code for it.
func Fail(stderr io.Writer, err error) int {
	var e *v8sandbox.Error
	if !errors.As(err, &e) {
		e = v8sandbox.Errorf(v8sandbox.CodeInternal, "%v", err)
	}
	enc := json.NewEncoder(stderr)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(struct {
		Code    v8sandbox.Code `json:"code"`
		Message string         `json:"message"`
	}{e.Code, e.Message})
	return ExitCode(e.Code)
}
