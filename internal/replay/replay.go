// Package replay re-runs a recorded call_tool_chain program against the
// tool responses in its run record, with no backends: every backend call the
// program makes is answered from the record (matched by backend, tool and
// arguments, in recorded order for repeated calls), and a call the record
// does not hold is an error. It is what `isogate replay` runs: for
// debugging a run, and for turning a bad run into a test.
package replay

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/isogate/isogate/internal/catalog"
	"github.com/isogate/isogate/internal/codemode"
	"github.com/isogate/isogate/internal/pipeline"
	"github.com/isogate/isogate/internal/textcut"
	"github.com/isogate/isogate/v8sandbox"
)

// ReadRecord reads a run record written to server.record_dir (or saved
// from the isogate://runs/{id} resource).
func ReadRecord(path string) (*pipeline.RunRecord, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading run record: %w", err)
	}
	var rec pipeline.RunRecord
	if err := json.Unmarshal(b, &rec); err != nil {
		return nil, fmt.Errorf("%s is not a run record: %w", path, err)
	}
	if rec.Code == "" {
		return nil, fmt.Errorf("%s is not a run record: it has no code", path)
	}
	return &rec, nil
}

// Options configure [Run].
type Options struct {
	// Runner runs tier-3 programs; required, except for a run refused
	// before it started (RefusedBeforeStart), which is not re-run.
	Runner v8sandbox.Runner
	// Timeout bounds the replay instead of the recorded timeout; 0: the
	// recorded one, or the engine's default for a record without limits.
	Timeout time.Duration
	// Logger receives the engine's log lines; nil: slog.Default().
	Logger *slog.Logger
}

// Limits returns the limits a replay of rec runs under: the recorded ones
// (rec.Limits), with timeout instead of the recorded timeout when it is
// not 0.
func Limits(rec *pipeline.RunRecord, timeout time.Duration) pipeline.RunLimits {
	var l pipeline.RunLimits
	if rec.Limits != nil {
		l = *rec.Limits
	}
	if timeout > 0 {
		l.TimeoutMS = timeout.Milliseconds()
	}
	return l
}

// Outcome is a replay's result and how it compares with the record.
type Outcome struct {
	// Response is what the program did this time.
	Response codemode.Response
	// Same reports whether it ended as recorded: the same result, or the
	// same error code and message.
	Same bool
	// Difference says how it differs when it is not the same.
	Difference string
	// NotRun says why the program was not re-run: its run was refused
	// before it started (see [RefusedBeforeStart]), and Response is that
	// refusal as recorded. "" when the program was re-run.
	NotRun string
}

// refusalCodes are the codes of a run refused before its program started:
// the type check's (sandbox.typecheck: strict) and the plan's (a denied
// tool, a plan the person declined).
var refusalCodes = map[string]bool{
	"TYPECHECK_FAILED":      true,
	"TYPECHECK_UNAVAILABLE": true,
	"TYPECHECK_TIMEOUT":     true,
	"TYPECHECK_TOO_COMPLEX": true,
	"PLAN_DENIED":           true,
	"APPROVAL_DENIED":       true,
}

// notRunMark is how every refusal before the start says so.
const notRunMark = "the program was not run (no tool was called)"

// RefusedBeforeStart reports whether rec is a run refused before its
// program started: a refusal code (TYPECHECK_*, PLAN_DENIED, a declined
// plan's APPROVAL_DENIED), a message that says the program was not run,
// and not one call or console line. Such a run has nothing to replay: the
// refusal was decided against the catalogue, the policy and the checker
// of its gateway then, which a replay has none of (the record keeps the
// diagnostics and the plan, not the catalogue's declarations).
func RefusedBeforeStart(rec *pipeline.RunRecord) bool {
	return rec.Outcome == pipeline.OutcomeError && rec.Error != nil && refusalCodes[rec.Error.Code] &&
		strings.Contains(rec.Error.Message, notRunMark) && len(rec.Calls) == 0 && rec.OmittedCalls == 0 &&
		rec.RefusedCalls == 0 && len(rec.Console) == 0
}

// Run replays rec.
func Run(ctx context.Context, rec *pipeline.RunRecord, opts Options) (*Outcome, error) {
	if RefusedBeforeStart(rec) {
		// Reproduced as recorded: running the program here would meet a
		// catalogue of no backend at all, and fail as it never did.
		return &Outcome{
			Response: codemode.Response{Tier: codemode.Tier(rec.Tier), IsError: true, Code: v8sandbox.Code(rec.Error.Code),
				Text: rec.Error.Message, Console: []string{}, Diagnostics: rec.Diagnostics, Plan: rec.Plan},
			Same:   true,
			NotRun: fmt.Sprintf("the run was refused before it started (%s): nothing of it ran, so it is not re-run; its refusal as recorded follows", rec.Error.Code),
		}, nil
	}
	if opts.Runner == nil {
		return nil, errors.New("replay: a Runner is required")
	}
	// The replay's run can be cancelled by the record: a run the client
	// cancelled is cancelled again when it reaches the call that was in
	// flight then.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	calls, err := newRecorded(rec.Calls)
	if err != nil {
		return nil, err
	}
	if rec.Error != nil && rec.Error.Code == string(v8sandbox.CodeCancelled) {
		calls.cancelRun = cancel
	}
	limits := Limits(rec, opts.Timeout)
	timeout := time.Duration(limits.TimeoutMS) * time.Millisecond
	engine, err := codemode.New(codemode.Options{
		Runner:         opts.Runner,
		Catalog:        codemode.FromCatalog(catalogOf(rec.Calls)),
		Caller:         caller{pipeline.New(pipeline.Options{Backend: calls})},
		Timeout:        timeout,
		HeapMB:         limits.HeapMB,
		MaxToolCalls:   limits.MaxToolCalls,
		MaxResultBytes: limits.MaxResultBytes,
		Logger:         opts.Logger,
	})
	if err != nil {
		return nil, err
	}
	resp := engine.Execute(ctx, codemode.Request{Code: rec.Code, Timeout: timeout})
	out := &Outcome{Response: resp}
	out.Same, out.Difference = compare(rec, resp)
	return out, nil
}

// catalogOf offers the tools the record called, under their original names.
func catalogOf(calls []pipeline.CallRecord) *catalog.Catalog {
	byBackend := map[string][]*mcp.Tool{}
	seen := map[string]bool{}
	for _, c := range calls {
		if seen[c.Backend+"\x00"+c.Tool] {
			continue
		}
		seen[c.Backend+"\x00"+c.Tool] = true
		byBackend[c.Backend] = append(byBackend[c.Backend], &mcp.Tool{Name: c.Tool, InputSchema: json.RawMessage(`{"type":"object"}`)})
	}
	cat := catalog.New()
	for b, tools := range byBackend {
		cat.SetBackend(b, nil, tools)
	}
	return cat
}

// caller adapts the pipeline to code mode.
type caller struct{ p pipeline.Caller }

func (c caller) CallTool(ctx context.Context, backend, tool string, args json.RawMessage) (*mcp.CallToolResult, error) {
	return c.p.Call(ctx, &pipeline.Call{Backend: backend, Tool: tool, Args: args})
}

// recorded answers calls from a record.
type recorded struct {
	mu    sync.Mutex
	queue map[string][]pipeline.CallRecord // by callKey, in recorded order
	// cancelRun cancels the replay's run, for a record of a run its
	// client cancelled; nil otherwise.
	cancelRun func()
}

func newRecorded(calls []pipeline.CallRecord) (*recorded, error) {
	sorted := append([]pipeline.CallRecord(nil), calls...)
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].Seq < sorted[j].Seq })
	r := &recorded{queue: map[string][]pipeline.CallRecord{}}
	for _, c := range sorted {
		k := callKey(c.Backend, c.Tool, c.Args.JSON)
		if c.Args.JSON == nil {
			k = "truncated\x00" + c.Backend + "." + c.Tool // never matched
		}
		r.queue[k] = append(r.queue[k], c)
	}
	return r, nil
}

// Call implements pipeline.Caller.
func (r *recorded) Call(ctx context.Context, c *pipeline.Call) (*mcp.CallToolResult, error) {
	args := c.Args
	if len(args) == 0 {
		args = json.RawMessage("{}")
	}
	k := callKey(c.Backend, c.Tool, args)
	r.mu.Lock()
	q := r.queue[k]
	if len(q) == 0 {
		past := r.cancelRun != nil && r.consumed()
		r.mu.Unlock()
		if past {
			// Every recorded call was made: the client cancelled the run
			// before this one, as it does now.
			r.cancelRun()
			<-ctx.Done()
			return nil, fmt.Errorf("backend %q: tool %q: %w", c.Backend, c.Tool, ctx.Err())
		}
		return nil, fmt.Errorf("replay: the record has no (further) call %s(%s)", c.Name(), textcut.Clip(string(args), 200, "…"))
	}
	rc := q[0]
	r.queue[k] = q[1:]
	r.mu.Unlock()
	if cutShort(rc) {
		// The call was still running when its run ended: it runs until
		// the replay's run ends too, the same way (cancelled by the
		// client, or at the recorded deadline).
		if r.cancelRun != nil {
			r.cancelRun()
		}
		<-ctx.Done()
		return nil, fmt.Errorf("backend %q: tool %q: %w", c.Backend, c.Tool, ctx.Err())
	}
	switch {
	case rc.Code != "":
		return nil, &pipeline.Error{Code: rc.Code, Message: strings.TrimPrefix(rc.Error, string(rc.Code)+": ")}
	case rc.Error != "" && rc.Result.IsZero(): // else a result the tool marked isError
		return nil, errors.New(rc.Error)
	case rc.Result.JSON == nil:
		return nil, fmt.Errorf("replay: the recorded result of %s was truncated (%d bytes) and cannot be replayed", c.Name(), rc.Result.Bytes)
	}
	var res mcp.CallToolResult
	if err := json.Unmarshal(rc.Result.JSON, &res); err != nil {
		return nil, fmt.Errorf("replay: the recorded result of %s: %w", c.Name(), err)
	}
	return &res, nil
}

// consumed reports whether every recorded call has been made; r.mu must
// be held.
func (r *recorded) consumed() bool {
	for _, q := range r.queue {
		if len(q) > 0 {
			return false
		}
	}
	return true
}

// cutShort reports a call its run's end cut short: marked so (RunEnded),
// or, in a record written before the mark existed, failed with the
// context's error.
func cutShort(rc pipeline.CallRecord) bool {
	if rc.RunEnded {
		return true
	}
	return rc.Code == "" && !rc.OK && rc.Result.IsZero() && (strings.HasSuffix(rc.Error, context.Canceled.Error()) ||
		strings.HasSuffix(rc.Error, context.DeadlineExceeded.Error()))
}

// callKey identifies a call by backend, tool and canonical arguments.
func callKey(backend, tool string, args json.RawMessage) string {
	return backend + "\x00" + tool + "\x00" + canonical(args)
}

// canonical re-encodes JSON with sorted keys and no spaces, keeping numbers
// as written.
func canonical(raw []byte) string {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return string(raw)
	}
	b, err := json.Marshal(v)
	if err != nil {
		return string(raw)
	}
	return string(b)
}

// compare says whether resp ended as rec did: the same result, or the
// same error. A cancelled run is reproduced when the replay is cancelled
// too (the message says where it waited, which timing decides); a timeout
// when it times out with the same message, durations aside.
func compare(rec *pipeline.RunRecord, resp codemode.Response) (bool, string) {
	if rec.Outcome == pipeline.OutcomeError {
		want := rec.Error
		if want == nil {
			want = &pipeline.RunError{}
		}
		switch {
		case !resp.IsError:
			return false, fmt.Sprintf("the record failed with %s, the replay succeeded", want.Code)
		case string(resp.Code) == want.Code && want.Code == string(v8sandbox.CodeCancelled):
			return true, ""
		case string(resp.Code) != want.Code || comparable(resp.Code, withoutHints(resp.Text)) != comparable(resp.Code, withoutHints(want.Message)):
			return false, fmt.Sprintf("the record failed with %s: %s\nthe replay failed with %s: %s", want.Code, want.Message, resp.Code, resp.Text)
		}
		return true, ""
	}
	if resp.IsError {
		return false, fmt.Sprintf("the record succeeded, the replay failed with %s: %s", resp.Code, resp.Text)
	}
	if rec.Result.JSON == nil {
		return false, fmt.Sprintf("the recorded result was truncated (%d bytes): it cannot be compared", rec.Result.Bytes)
	}
	if got, want := canonical(resp.Value), canonical(rec.Result.JSON); got != want {
		return false, fmt.Sprintf("the result differs from the record:\nrecorded: %s\nreplayed: %s", textcut.Clip(want, 2000, "…"), textcut.Clip(got, 2000, "…"))
	}
	return true, ""
}

// reMillis matches a duration in an error message ("exceeded 1000 ms").
var reMillis = regexp.MustCompile(`\b\d+ ms\b`)

// comparable is the part of an error message that must match: a
// timeout's without its duration (a record without limits replays under
// another timeout).
func comparable(code v8sandbox.Code, msg string) string {
	if code == v8sandbox.CodeTimeout {
		return reMillis.ReplaceAllString(msg, "N ms")
	}
	return msg
}

// withoutHints drops the hints after an error message: they depend on the
// catalogue, which a replay only knows in part.
func withoutHints(msg string) string {
	msg, _, _ = strings.Cut(msg, "\n\nHint: ")
	return msg
}
