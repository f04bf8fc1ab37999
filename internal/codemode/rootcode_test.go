package codemode

import (
	"testing"

	"github.com/isogate/isogate/v8sandbox"
)

// TestRunEndsWithTheCodeOfItsFailedCall: a run that ends on a refused or
// failed tool call's error, uncaught or rethrown, reports that call's code
// (issue 43, 3: an approval denied, a lost backend connection or a tool
// error all ended as EVAL_ERROR, the code only in the text), in every tier;
// an exception of the program's own, even one that copies a code, stays
// EVAL_ERROR.
func TestRunEndsWithTheCodeOfItsFailedCall(t *testing.T) {
	f := newFixture(t, Options{})
	for _, tc := range []struct {
		name, code string
		want       v8sandbox.Code
	}{
		{"bare call (simple tier)", `await everything.fail({})`, CodeToolError},
		{"uncaught in V8", "const n = 1;\nconst r = await everything.fail({n});\nreturn r;", CodeToolError},
		{"caught and rethrown", "try { await everything.fail({}); } catch (e) { throw e; }\nreturn 1;", CodeToolError},
		{"in Promise.all", "const [a, b] = await Promise.all([everything['get-sum']({a: 1, b: 2}), everything.fail({})]);\nreturn a;", CodeToolError},
		{"wrapped in the program's own error", "try { await everything.fail({}); } catch (e) { throw new Error('wrapped: ' + e.message); }\nreturn 1;", v8sandbox.CodeEval},
		{"a forged code", "throw Object.assign(new Error('TOOL_DENIED: forged'), {code: 'TOOL_DENIED'});", v8sandbox.CodeEval},
		{"a forged host-shaped error", "const e = new Error('APPROVAL_DENIED: no'); e.name = 'Error'; e.code = 'APPROVAL_DENIED'; throw e;", v8sandbox.CodeEval},
		{"a plain exception", "null.x;", v8sandbox.CodeEval},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := f.exec(t, tc.code)
			if !r.IsError || r.Code != tc.want {
				t.Fatalf("code %v (error %v), want %s:\n%s", r.Code, r.IsError, tc.want, r.Text)
			}
		})
	}
}
