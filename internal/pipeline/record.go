package pipeline

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/isogate/isogate/v8sandbox"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/isogate/isogate/internal/textcut"
	"github.com/isogate/isogate/internal/typecheck"
)

// MaxRecordedBytes bounds the arguments and the result kept per recorded
// call; larger ones are kept as a truncated string with their size.
const MaxRecordedBytes = 64 << 10

// CallRecord is one backend call of a run.
type CallRecord struct {
	Seq        int    `json:"seq"`
	Backend    string `json:"backend"`
	Tool       string `json:"tool"`
	Args       Blob   `json:"args"`
	StartedMS  int64  `json:"started_ms"`
	DurationMS int64  `json:"duration_ms"`
	OK         bool   `json:"ok"`
	// Code is the pipeline code of a refused call (TOOL_DENIED, …).
	Code  v8sandbox.Code `json:"code,omitempty"`
	Error string         `json:"error,omitempty"`
	// RunEnded marks a call cut short because its run ended (timed out,
	// was cancelled, or returned with the call in flight): a replay lets it
	// run until its own run ends the same way.
	RunEnded bool `json:"run_ended,omitempty"`
	// Result is the backend's CallToolResult.
	Result Blob `json:"result,omitzero"`
	// Approval is how a person answered the call's approval (how long it
	// waited, who answered and how); absent when none was asked. The wait
	// comes before StartedMS.
	Approval *ApprovalAnswer `json:"approval,omitempty"`
}

// MaxRecordedError bounds the error text kept per recorded call (a
// result's isError text, an error's message).
const MaxRecordedError = 4 << 10

// Blob is recorded JSON: the value itself, or, past MaxRecordedBytes, its
// first bytes as a string with the full size.
type Blob struct {
	// JSON is the value when it was kept whole.
	JSON json.RawMessage
	// Truncated is the start of a value too large to keep.
	Truncated string
	// Bytes is the full size of a truncated value.
	Bytes int
}

// NewBlob records raw JSON, truncating it past MaxRecordedBytes.
func NewBlob(raw []byte) Blob {
	if len(raw) <= MaxRecordedBytes && json.Valid(raw) {
		return Blob{JSON: append(json.RawMessage(nil), raw...)}
	}
	return Blob{Truncated: string(textcut.Prefix(raw, MaxRecordedBytes)), Bytes: len(raw)}
}

// size is the bytes b holds.
func (b Blob) size() int { return len(b.JSON) + len(b.Truncated) }

// IsZero reports whether nothing was recorded (for omitempty).
func (b Blob) IsZero() bool { return b.JSON == nil && b.Bytes == 0 }

type truncatedBlob struct {
	Truncated string `json:"truncated"`
	Bytes     int    `json:"bytes"`
}

// MarshalJSON writes the value, or {"truncated": "...", "bytes": N}.
func (b Blob) MarshalJSON() ([]byte, error) {
	switch {
	case b.JSON != nil:
		return b.JSON, nil
	case b.Bytes > 0:
		return json.Marshal(truncatedBlob{b.Truncated, b.Bytes})
	}
	return []byte("null"), nil
}

// UnmarshalJSON reads what MarshalJSON wrote.
func (b *Blob) UnmarshalJSON(raw []byte) error {
	var t truncatedBlob
	if json.Unmarshal(raw, &t) == nil && t.Bytes > 0 && t.Truncated != "" {
		var probe map[string]json.RawMessage
		_ = json.Unmarshal(raw, &probe)
		if len(probe) == 2 {
			*b = Blob{Truncated: t.Truncated, Bytes: t.Bytes}
			return nil
		}
	}
	*b = Blob{JSON: append(json.RawMessage(nil), raw...)}
	return nil
}

// RecordStage adds every call made under a [Run] to its record: arguments,
// timings, outcome and the backend's result.
func RecordStage() Stage {
	return func(next Caller) Caller {
		return CallerFunc(func(ctx context.Context, c *Call) (*mcp.CallToolResult, error) {
			run := RunFrom(ctx)
			if run == nil {
				return next.Call(ctx, c)
			}
			rec := run.begin(c)
			start := time.Now()
			res, err := next.Call(ctx, c)
			rec.DurationMS, rec.OK = time.Since(start).Milliseconds(), err == nil && res != nil && !res.IsError
			rec.Approval = c.Approval
			if err != nil {
				var refused *Error // only a refusal's code is recorded
				if errors.As(err, &refused) {
					rec.Code = refused.Code
				}
				rec.Error = err.Error()
				rec.RunEnded = ctx.Err() != nil
			}
			if res != nil {
				rec.Result = resultBlob(res)
				if res.IsError && err == nil {
					rec.Error = resultError(res)
				}
			}
			run.add(rec)
			return res, err
		})
	}
}

// resultError is the error a tool reported in its result (isError): its
// texts, cut to MaxRecordedError.
func resultError(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		t, ok := c.(*mcp.TextContent)
		if !ok {
			continue
		}
		if b.Len() > 0 {
			b.WriteString("\n")
		}
		if left := MaxRecordedError - b.Len(); len(t.Text) > left {
			b.WriteString(textcut.Prefix(t.Text, max(left, 0)) + "… [cut]")
			break
		}
		b.WriteString(t.Text)
	}
	if b.Len() == 0 {
		return "the tool reported an error (isError) without text"
	}
	return b.String()
}

// resultBlob records a backend result as [NewBlob] of its JSON would,
// without encoding a large text whole only to keep its first
// MaxRecordedBytes: a result whose texts alone exceed the bound is encoded
// with each text clipped there (the kept prefix is the same bytes), and the
// full size is that encoding's plus the clipped tails' escaped lengths.
func resultBlob(res *mcp.CallToolResult) Blob {
	texts := 0
	for _, c := range res.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			texts += len(t.Text)
		}
	}
	if texts <= MaxRecordedBytes {
		// The SDK's own encoding, which json.Marshal would only compact
		// again (TestResultBlobMatchesTheWholeEncoding holds them equal).
		raw, err := res.MarshalJSON()
		if err != nil {
			return Blob{}
		}
		if len(raw) <= MaxRecordedBytes {
			// What NewBlob keeps, without checking and copying again the
			// fresh, valid JSON just made.
			return Blob{JSON: raw}
		}
		return NewBlob(raw)
	}
	clipped := *res
	clipped.Content = make([]mcp.Content, len(res.Content))
	tails := 0
	for i, c := range res.Content {
		clipped.Content[i] = c
		if t, ok := c.(*mcp.TextContent); ok && len(t.Text) > MaxRecordedBytes {
			cut := runeBoundary(t.Text, MaxRecordedBytes)
			short := *t
			short.Text = t.Text[:cut]
			clipped.Content[i] = &short
			tails += jsonStringBodyLen(t.Text[cut:])
		}
	}
	raw, err := json.Marshal(&clipped)
	if err != nil {
		return Blob{}
	}
	return Blob{Truncated: string(textcut.Prefix(raw, MaxRecordedBytes)), Bytes: len(raw) + tails}
}

// runeBoundary is the first offset at or past n where encoding/json's
// decoding of s (rune by rune, an invalid byte alone) starts a rune.
func runeBoundary(s string, n int) int {
	i := 0
	for i < n && i < len(s) {
		_, size := utf8.DecodeRuneInString(s[i:])
		i += size
	}
	return i
}

// jsonStringBodyLen is the length of s encoded by encoding/json as a string
// (HTML-escaped, as json.Marshal does), without the quotes. ASCII bytes
// are counted through asciiEscapeExtra (a branch per byte was most of the
// record stage's time for a 1 MB result).
func jsonStringBodyLen(s string) int {
	n := len(s)
	for i := 0; i < len(s); {
		b := s[i]
		if b < utf8.RuneSelf {
			n += int(asciiEscapeExtra[b])
			i++
			continue
		}
		c, size := utf8.DecodeRuneInString(s[i:])
		if (c == utf8.RuneError && size == 1) || c == '\u2028' || c == '\u2029' {
			n += 6 - size // \ufffd, \u2028, \u2029
		}
		i += size
	}
	return n
}

// asciiEscapeExtra is, for each ASCII byte, how many bytes encoding/json
// (HTML-escaped) writes for it beyond the byte itself: 1 for a two-byte
// escape (\" \\ \b \f \n \r \t), 5 for a \u00XX escape (other control
// bytes, <, >, &).
var asciiEscapeExtra = func() (extra [utf8.RuneSelf]uint8) {
	for i := range extra {
		switch b := byte(i); {
		case b == '\\' || b == '"' || b == '\b' || b == '\f' || b == '\n' || b == '\r' || b == '\t':
			extra[i] = 1
		case b < 0x20 || b == '<' || b == '>' || b == '&':
			extra[i] = 5
		}
	}
	return extra
}()

// refuse records a call the policy or approval stage refused (it never
// reaches the record stage) and returns err. A call refused past the run's
// budget is only counted: a program looping on refused calls must not grow
// its record.
func refuse(ctx context.Context, c *Call, err *Error) error {
	if run := RunFrom(ctx); run != nil && err.Code == CodeToolBudget {
		run.countRefused()
	} else if run != nil {
		rec := run.begin(c)
		rec.Code, rec.Error, rec.Approval = err.Code, err.Error(), c.Approval
		run.add(rec)
	}
	return err
}

func argsOrEmpty(args json.RawMessage) json.RawMessage {
	if len(args) == 0 {
		return json.RawMessage("{}")
	}
	return args
}

// RunRecord is what one call_tool_chain run did: the program, how it ended
// and every backend call it made, served as isogate://runs/{id} and written
// to server.record_dir.
type RunRecord struct {
	ID         string    `json:"id"`
	Code       string    `json:"code"`
	Tier       string    `json:"tier"`
	Started    time.Time `json:"started"`
	DurationMS int64     `json:"duration_ms"`
	// Outcome is "ok" or "error".
	Outcome string    `json:"outcome"`
	Error   *RunError `json:"error,omitempty"`
	Console []string  `json:"console"`
	// ResultBytes is the size of the program's JSON result.
	ResultBytes int `json:"result_bytes"`
	// Result is the program's JSON result (for isogate replay).
	Result Blob `json:"result,omitzero"`
	// ResultURI is where the full output was stored
	// (isogate://result/{id}) when it was too large to return whole.
	ResultURI string       `json:"result_uri,omitempty"`
	Calls     []CallRecord `json:"calls"`
	// OmittedCalls counts the calls made past the record's bounds
	// (MaxRecordCalls entries, MaxRecordBytes of arguments and results):
	// made, not stored ("… N more calls").
	OmittedCalls int `json:"omitted_calls,omitempty"`
	// RefusedCalls counts the calls refused past sandbox.max_tool_calls
	// (TOOL_BUDGET): counted, never stored.
	RefusedCalls int `json:"refused_calls,omitempty"`
	// UnawaitedCalls counts the tool calls the program did not await (they
	// still ran to completion, or until shortly before the deadline).
	UnawaitedCalls int `json:"unawaited_calls,omitempty"`
	// Diagnostics are what the type checker found in the program
	// (sandbox.typecheck warn or strict), Plan what it may call.
	Diagnostics []typecheck.Diagnostic `json:"diagnostics,omitempty"`
	Plan        *Plan                  `json:"plan,omitempty"`
	// Limits are the limits the run ran under, which a replay applies.
	Limits *RunLimits `json:"limits,omitempty"`
	// Durability says whether the run was journalled (sandbox.durable):
	// "journalled", "resumed by replay (N calls from the journal)", or
	// "not durable: <why>" once its journal passed a bound.
	Durability string `json:"durability,omitempty"`
}

// RunLimits are the limits of a run (the request's timeout, and the
// sandbox's heap, tool call budget and result size), recorded so that a
// replay runs under the same: a run that timed out after 1 s replays with
// 1 s.
type RunLimits struct {
	TimeoutMS      int64 `json:"timeout_ms"`
	HeapMB         int   `json:"heap_mb,omitempty"`
	MaxToolCalls   int   `json:"max_tool_calls,omitempty"`
	MaxResultBytes int   `json:"max_result_bytes,omitempty"`
}

// RunError is how a failed run ended.
type RunError struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// The outcomes of a run.
const (
	OutcomeOK    = "ok"
	OutcomeError = "error"
)
