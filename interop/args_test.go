package interop

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestTypeScriptSDKInvalidArguments: through the official TypeScript SDK
// client, the real binary and server-everything, a call with wrong
// arguments is refused before the backend with INVALID_ARGUMENTS, saying
// that `x` is not a parameter (did you mean `a`?) and what get_sum takes,
// with the line and column of the call (issue 43, 3: the backend's raw
// "-32602 … received undefined at a" came back as EVAL_ERROR); a program
// catches it by its code; no wrong call reaches the backend (the session's
// stats count none), a right one does.
func TestTypeScriptSDKInvalidArguments(t *testing.T) {
	t.Parallel()
	type answer struct {
		IsError    bool
		Text, Code string
	}
	var r struct {
		Simple, V8, Caught, Right      answer
		Before, AfterWrong, AfterRight json.RawMessage
	}
	runNodeInto(t, &r, "invalid_args.mjs", "--http", gateways.http(t, "").url)
	takes := "it takes { a: number; b: number }"
	if s := r.Simple; !s.IsError || s.Code != "INVALID_ARGUMENTS" ||
		!strings.Contains(s.Text, "`x` (did you mean `a`?) and `y` (did you mean `b`?) are not parameters of everything.get_sum") ||
		!strings.Contains(s.Text, takes) || !strings.Contains(s.Text, "(line 1, column 25)") {
		t.Errorf("get_sum({x: 1, y: 2}): %+v", s)
	}
	if v := r.V8; !v.IsError || v.Code != "INVALID_ARGUMENTS" || !strings.Contains(v.Text, "`b` must be number, not string") ||
		!strings.Contains(v.Text, takes) || !strings.Contains(v.Text, "(line 2, column 28)") {
		t.Errorf("get_sum({a: n, b: 'two'}) in V8: %+v", v)
	}
	if c := r.Caught; c.IsError || !strings.Contains(c.Text, "INVALID_ARGUMENTS") {
		t.Errorf("caught: %+v", c)
	}
	if r.Right.IsError || !strings.Contains(r.Right.Text, "3") {
		t.Errorf("get_sum({a: 1, b: 2}): %+v", r.Right)
	}
	calls := func(stats json.RawMessage) int {
		var s struct {
			Tools []struct {
				Name  string
				Calls int
			}
		}
		if err := json.Unmarshal(stats, &s); err != nil {
			t.Fatalf("stats: %v: %s", err, stats)
		}
		for _, tool := range s.Tools {
			if tool.Name == "everything.get-sum" {
				return tool.Calls
			}
		}
		return 0
	}
	if b, w, a := calls(r.Before), calls(r.AfterWrong), calls(r.AfterRight); w != b || a != b+1 {
		t.Errorf("get-sum calls that reached the backend: %d before, %d after the wrong calls, %d after the right one; want %d, %d, %d\n%s",
			b, w, a, b, b, b+1, r.AfterRight)
	}
}
