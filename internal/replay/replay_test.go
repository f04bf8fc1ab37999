package replay

import (
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/isogate/isogate/internal/codemode"
	"github.com/isogate/isogate/internal/pipeline"
	"github.com/isogate/isogate/v8sandbox"
)

// record is a run record as the gateway writes it.
func record(t *testing.T, raw string) *pipeline.RunRecord {
	t.Helper()
	var rec pipeline.RunRecord
	if err := json.Unmarshal([]byte(raw), &rec); err != nil {
		t.Fatal(err)
	}
	return &rec
}

func runner(t *testing.T) v8sandbox.Runner {
	t.Helper()
	pool := v8sandbox.NewPool(v8sandbox.Options{Workers: 1})
	t.Cleanup(pool.Close)
	return pool
}

// TestCancelledRunIsReproduced: a record of a run its client cancelled
// while a call was in flight replays as reproduced: the replay makes the
// recorded calls, is cancelled at the one that was in flight, and ends
// CANCELLED, as recorded; also a record written before calls were marked
// run_ended (the call's error is the context's), and a run cancelled
// before its next call (every recorded call made).
func TestCancelledRunIsReproduced(t *testing.T) {
	const code = `const s = await everything.get_sum({a: 1, b: 2});
return await everything.trigger_long_running_operation({duration: 30, steps: 30})`
	sum := `{"seq": 1, "backend": "everything", "tool": "get-sum", "args": {"a": 1, "b": 2}, "ok": true,
		"result": {"content": [{"type": "text", "text": "The sum of 1 and 2 is 3."}]}}`
	for name, calls := range map[string]string{
		"marked": sum + `, {"seq": 2, "backend": "everything", "tool": "trigger-long-running-operation", "args": {"duration": 30, "steps": 30},
			"error": "backend \"everything\": tool \"trigger-long-running-operation\": context canceled", "run_ended": true}`,
		"unmarked": sum + `, {"seq": 2, "backend": "everything", "tool": "trigger-long-running-operation", "args": {"duration": 30, "steps": 30},
			"error": "backend \"everything\": tool \"trigger-long-running-operation\": context canceled"}`,
		"before the next call": sum,
	} {
		t.Run(name, func(t *testing.T) {
			code := code
			if name == "before the next call" { // cancelled after the first call, before the second
				code = "await everything.get_sum({a: 1, b: 2});\nreturn await everything.get_sum({a: 5, b: 5})"
			}
			rec := record(t, `{"id": "x", "code": `+jsonString(code)+`, "tier": "v8", "outcome": "error",
				"error": {"code": "CANCELLED", "message": "CANCELLED: execution cancelled by the caller"},
				"calls": [`+calls+`], "limits": {"timeout_ms": 20000}}`)
			ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
			defer cancel()
			out, err := Run(ctx, rec, Options{Runner: runner(t), Logger: slog.New(slog.DiscardHandler)})
			if err != nil {
				t.Fatal(err)
			}
			if !out.Same || out.Response.Code != v8sandbox.CodeCancelled {
				t.Fatalf("not reproduced (%s): %s\n%s", out.Response.Code, out.Difference, out.Response.Text)
			}
		})
	}
}

// TestRecordedErrorSaysWhatFailedOnce: a recorded backend error that
// already names its backend reaches the program without a second
// `backend "everything":` in front of it.
func TestRecordedErrorSaysWhatFailedOnce(t *testing.T) {
	rec := record(t, `{"id": "x", "code": "try { await everything.echo({message: \"hi\"}) } catch (e) { return e.message }", "tier": "v8",
		"outcome": "ok", "result": "backend \"everything\": tool \"echo\": connection reset",
		"calls": [{"seq": 1, "backend": "everything", "tool": "echo", "args": {"message": "hi"},
			"error": "backend \"everything\": tool \"echo\": connection reset"}]}`)
	out, err := Run(context.Background(), rec, Options{Runner: runner(t), Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	if !out.Same || strings.Count(string(out.Response.Value), `backend \"everything\"`) != 1 {
		t.Fatalf("%s: %s", out.Response.Value, out.Difference)
	}
}

// TestTimeoutComparedWithoutItsDuration: a TIMEOUT is the same timeout
// whatever its milliseconds (a record without limits replays under
// another timeout); its other words still count.
func TestTimeoutComparedWithoutItsDuration(t *testing.T) {
	rec := &pipeline.RunRecord{Outcome: pipeline.OutcomeError, Error: &pipeline.RunError{Code: "TIMEOUT",
		Message: "TIMEOUT: execution exceeded 1000 ms while waiting for everything.echo"}}
	for text, same := range map[string]bool{
		"TIMEOUT: execution exceeded 30000 ms while waiting for everything.echo": true,
		"TIMEOUT: execution exceeded 1000 ms while waiting for everything.add":   false,
		"TIMEOUT: execution exceeded 1000 ms":                                    false,
	} {
		resp := replayed(v8sandbox.CodeTimeout, text)
		if got, diff := compare(rec, resp); got != same {
			t.Errorf("%q: same %v, want %v (%s)", text, got, same, diff)
		}
	}
}

// replayed is a replay's failed response.
func replayed(code v8sandbox.Code, text string) codemode.Response {
	return codemode.Response{IsError: true, Code: code, Text: text}
}

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// TestToolErrorResultReplaysAsAResult: a call whose tool answered isError
// is recorded with its error text beside the result (issue 43); the
// replay hands the program the result, as the backend did, not an error.
func TestToolErrorResultReplaysAsAResult(t *testing.T) {
	const code = `try { await fs.read({path: "/x"}) } catch (e) { return e.message }`
	rec := record(t, `{"id": "x", "code": `+jsonString(code)+`, "tier": "v8", "outcome": "ok",
		"result": "fs.read failed: ENOENT /x",
		"calls": [{"seq": 1, "backend": "fs", "tool": "read", "args": {"path": "/x"}, "ok": false, "error": "ENOENT /x",
			"result": {"content": [{"type": "text", "text": "ENOENT /x"}], "isError": true}}], "limits": {"timeout_ms": 20000}}`)
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	out, err := Run(ctx, rec, Options{Runner: runner(t), Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	if !out.Same {
		t.Fatalf("not reproduced (%s): %s\n%s", out.Response.Code, out.Difference, out.Response.Text)
	}
}
