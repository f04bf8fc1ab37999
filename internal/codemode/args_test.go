package codemode

import (
	"strings"
	"testing"

	"github.com/isogate/isogate/internal/pipeline"
)

// TestInvalidArgumentsRefusedBeforeTheCall: a call whose arguments the
// tool's input schema refuses is refused with INVALID_ARGUMENTS in every
// tier, naming the wrong parameter (with the closest right one), the
// missing ones and the type the tool takes, with the line and column of
// the call in a program (where the program calls the tool by name); the
// backend is never called (issue 43, 3: the
// backend's raw "-32602 … received undefined at a" came back as
// EVAL_ERROR, with no line and no word of `x`).
func TestInvalidArgumentsRefusedBeforeTheCall(t *testing.T) {
	f := newFixture(t, Options{})
	takes := "it takes { a: number; b: number }"
	for _, tc := range []struct {
		name, code string
		tier       Tier
		want       []string
		calls      int32 // that reach the backend
	}{
		{"simple call", "return await everything.get_sum({x: 1, y: 2})", TierSimpleCall,
			[]string{"INVALID_ARGUMENTS: ", "`x` (did you mean `a`?) and `y` (did you mean `b`?) are not parameters of everything.get_sum", takes, "(line 1, column 25)"}, 0},
		{"simple call on its second line", "\nconst s = await everything.get_sum({a: 1, bb: 2}); return s", TierSimpleCall,
			[]string{"`bb` (did you mean `b`?) is not a parameter of everything.get_sum; the required parameter `b` is missing", "(line 2, column 28)"}, 0},
		{"direct JSON", `{"tool": "everything.get-sum", "arguments": {"a": "1", "b": 2}}`, TierDirect,
			[]string{"everything.get_sum: `a` must be number, not string; " + takes}, 0},
		{"uncaught in V8", "const n = 1;\nconst r = await everything.get_sum({a: n, bb: 2});\nreturn r;", TierV8,
			[]string{"`bb` (did you mean `b`?) is not a parameter of everything.get_sum", takes, "(line 2, column 28)"}, 0}, // as in tier 2
		{"in a function in V8", "async function sum(x) {\n  return everything['get-sum'](x);\n}\nreturn await sum({a: 1});", TierV8,
			[]string{"everything.get_sum: the required parameter `b` is missing; " + takes + " (line 2, column 31)"}, 0},
		{"the refused one of three calls", "const a = await everything.get_sum({a: 1, b: 2});\nconst b = await everything.get_sum({a: 1, 'b': 2}), c = await everything.get_sum({a});\nreturn [a, b, c];", TierV8,
			[]string{takes + " (line 2, column 74)"}, 2},
		{"the refused one by its value", "await everything.get_sum({a: 1, b: 2});\nreturn await everything.get_sum({a: 1, b: '2'});", TierV8,
			[]string{"`b` must be number, not string; " + takes + " (line 2, column 25)"}, 1},
		{"two calls it may be", "const a = await everything.get_sum({a: 1, ...{b: 2}});\nconst b = await everything.get_sum(JSON.parse('{\"a\": 1}'));\nreturn [a, b];", TierV8,
			[]string{takes + " (line 1, column 28 or line 2, column 28)"}, 1},
		{"through an alias: no position", "const f = everything.get_sum;\nreturn await f({a: 1});", TierV8,
			[]string{"the required parameter `b` is missing; " + takes}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := f.backendCalls.Load()
			r := f.exec(t, tc.code)
			if !r.IsError || r.Code != pipeline.CodeInvalidArguments || r.Tier != tc.tier {
				t.Fatalf("code %q tier %s (error %v), want %s in tier %s:\n%s", r.Code, r.Tier, r.IsError, pipeline.CodeInvalidArguments, tc.tier, r.Text)
			}
			for _, w := range tc.want {
				if !strings.Contains(r.Text, w) {
					t.Errorf("the refusal does not say %q:\n%s", w, r.Text)
				}
			}
			if strings.HasSuffix(tc.name, "no position") && strings.Contains(r.Text, "(line") {
				t.Errorf("a position where none is known:\n%s", r.Text)
			}
			if n := f.backendCalls.Load() - before; n != tc.calls {
				t.Errorf("%d calls reached the backend, want %d", n, tc.calls)
			}
		})
	}

	// A program catches the refusal by its code, and goes on.
	r := f.ok(t, "try { await everything.get_sum({x: 1, y: 2}); } catch (e) { return [e.code, e.message.startsWith('INVALID_ARGUMENTS: `x`')]; }")
	if !strings.Contains(r.Text, `"INVALID_ARGUMENTS"`) || !strings.Contains(r.Text, "true") {
		t.Fatalf("caught: %s", r.Text)
	}
	// Right arguments, and extra ones where the schema admits them, pass.
	before := f.backendCalls.Load()
	f.ok(t, "return await everything.get_sum({a: 1, b: 2})")
	f.ok(t, "return await my_backend.echo({anything: 1, at: 'all'})")
	if n := f.backendCalls.Load() - before; n != 2 {
		t.Fatalf("%d backend calls, want 2", n)
	}
}
