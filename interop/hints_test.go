package interop

import (
	"strings"
	"testing"
)

// agentHintsReport is the report of scripts/agent_hints.mjs.
type agentHintsReport struct {
	MissingAwait, Envelope, Syntax, Intent, ThrownValue, LoopAfterCall struct {
		IsError bool
		Text    string
		Code    string // _meta["isogate/code"]
	}
}

// TestTypeScriptSDKAgentHints: what the official TypeScript SDK client
// reads back for common mistakes. The missing-await notice calls the tool
// by its JavaScript name (get_sum, never the subtraction get-sum); reading
// a result as the MCP envelope says results are already unwrapped; an
// unclosed brace on line 1 is reported on line 1; an intent owner=dee
// keeps owner=dee only, and the note says so; a thrown object (no stack,
// no line) is said to be no Error, with what to throw instead; an endless
// loop after a tool call times out with a hint that the program's own code
// was running, not a call. A failed run carries its error code in
// _meta["isogate/code"] (EVAL_ERROR, TIMEOUT), a successful one none.
func TestTypeScriptSDKAgentHints(t *testing.T) {
	t.Parallel()
	var r agentHintsReport
	runNodeInto(t, &r, "agent_hints.mjs", "--http", gateways.http(t, "").url)
	if m := r.MissingAwait; m.IsError || m.Code != "" || !strings.Contains(m.Text, "e.g. `(await everything.get_sum({...})).content`") ||
		strings.Contains(m.Text, "everything.get-sum({") {
		t.Errorf("missing await: %+v", m)
	}
	if e := r.Envelope; !e.IsError || !strings.Contains(e.Text, "TypeError") || !strings.Contains(e.Text, "already unwrapped") ||
		!strings.Contains(e.Text, "`const r = await everything.get_sum({...})`") {
		t.Errorf("r.content[0].text: %+v", e)
	}
	if s := r.Syntax; !s.IsError || !strings.Contains(s.Text, "(line 1, column 13)") || s.Code != "EVAL_ERROR" {
		t.Errorf("return {a: 1: %+v", s)
	}
	if v := r.ThrownValue; !v.IsError || v.Code != "EVAL_ERROR" || !strings.HasPrefix(v.Text, `{"reason":"nope"}`) ||
		!strings.Contains(v.Text, "Hint: The program threw a value that is not an Error") {
		t.Errorf("throw {reason: 'nope'}: %+v", v)
	}
	if l := r.LoopAfterCall; !l.IsError || l.Code != "TIMEOUT" || !strings.HasPrefix(l.Text, "TIMEOUT: execution exceeded 1000 ms\n\nHint: No tool call was in flight") {
		t.Errorf("while (true) {} after a call: %+v", l)
	}
	if i := r.Intent; i.IsError || !strings.HasPrefix(i.Text, `[intent filter: kept 1 of 377 lines matching "owner=dee"`) ||
		!strings.Contains(i.Text, "task 200 owner=dee") || strings.Contains(i.Text, "owner=bo") || strings.Contains(i.Text, "owner=deepak") {
		t.Errorf("intent owner=dee: %.600s", i.Text)
	}
}
