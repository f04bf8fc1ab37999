package runcode

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/isogate/isogate/config"
)

func TestLimits_CodeLength(t *testing.T) {
	r := newRunner(t, config.RunCodeConfig{})
	// Exactly at the limit, with two-byte characters: characters count, not bytes.
	prefix := "return 'é'.length; //"
	atLimit := prefix + strings.Repeat("é", MaxCodeChars-utf8.RuneCountInString(prefix))
	if n := utf8.RuneCountInString(atLimit); n != MaxCodeChars || len(atLimit) < 2*MaxCodeChars-len(prefix) {
		t.Fatalf("test code is %d characters, %d bytes", n, len(atLimit))
	}
	if got := mustOK(t, r, Input{Code: atLimit}); got != "1" {
		t.Fatalf("result = %s", got)
	}
	out := r.Run(context.Background(), Input{Code: atLimit + "x"})
	wantError(t, out, ValidationError, "12001 characters long; the limit is 12000")
}

func TestLimits_Validation(t *testing.T) {
	r := newRunner(t, config.RunCodeConfig{})
	wantError(t, r.Run(context.Background(), Input{Code: "  \n"}), ValidationError, "code is empty")
	wantError(t, r.Run(context.Background(), Input{Code: "return 1", Language: "python"}), ValidationError,
		`language "python" is not supported`)
	if got := mustOK(t, r, Input{Code: "return 1", Language: "javascript"}); got != "1" {
		t.Fatalf("result = %s", got)
	}
}

func TestLimits_TimeoutClamp(t *testing.T) {
	r := newRunner(t, config.RunCodeConfig{})
	cases := []struct {
		timeout *int
		want    int
		warning string
	}{
		{nil, 3000, ""},
		{intp(1000), 1000, ""},
		{intp(250), 250, ""},
		{intp(5000), 5000, ""},
		{intp(10), 250, "timeout_ms 10 is below the minimum; using 250"},
		{intp(0), 250, "timeout_ms 0 is below the minimum; using 250"},
		{intp(-5), 250, "timeout_ms -5 is below the minimum; using 250"},
		{intp(60000), 5000, "timeout_ms 60000 is above the maximum; using 5000"},
	}
	for _, c := range cases {
		out := r.Run(context.Background(), Input{Code: "return 1", TimeoutMS: c.timeout})
		if !out.OK || out.Environment.TimeoutMS != c.want {
			t.Errorf("timeout %v: ok %v, timeout_ms %d, want %d", c.timeout, out.OK, out.Environment.TimeoutMS, c.want)
		}
		var warnings []string
		if c.warning != "" {
			warnings = []string{c.warning}
		}
		if strings.Join(out.Warnings, "|") != strings.Join(warnings, "|") {
			t.Errorf("timeout %v: warnings = %q, want %q", c.timeout, out.Warnings, warnings)
		}
	}
	// The clamp warning is kept when the run then fails.
	out := r.Run(context.Background(), Input{Code: "for (;;) {}", TimeoutMS: intp(1)})
	wantError(t, out, TimeoutError, "250 ms")
	if len(out.Warnings) != 1 || !strings.Contains(out.Warnings[0], "below the minimum") {
		t.Fatalf("warnings = %q", out.Warnings)
	}
}

func TestLimits_Timeout(t *testing.T) {
	r := newRunner(t, config.RunCodeConfig{})
	for _, code := range []string{
		`for (;;) {}`,
		`console.log("before"); while (true) {}`,
		`for (;;) { await null }`, // microtasks only
		`const spin = async () => { for (;;) await Promise.resolve() }; return spin()`,
	} {
		out := r.Run(context.Background(), Input{Code: code, TimeoutMS: intp(300)})
		wantError(t, out, TimeoutError, "300 ms")
		if strings.Contains(code, "before") && (len(out.Stdout) != 1 || out.Stdout[0] != "before") {
			t.Errorf("stdout before the timeout = %q, want [before]", out.Stdout)
		}
	}
}

func TestLimits_Heap(t *testing.T) {
	r := newRunner(t, config.RunCodeConfig{})
	for _, code := range []string{
		`const a = []; for (;;) a.push({i: a.length, s: "x" + a.length});`,
		`let s = []; for (let i = 0; ; i++) s.push("abcdefghij".repeat(100) + i);`,
	} {
		out := r.Run(context.Background(), Input{Code: code, TimeoutMS: intp(5000)})
		wantError(t, out, VMError, "out of memory: JavaScript heap limit of 16 MB exceeded")
	}
	// Memory that fits is fine, and the pool is usable after a heap hit.
	if got := mustOK(t, r, Input{Code: `const a = new Array(100000).fill(1); return a.length`}); got != "100000" {
		t.Fatalf("result = %s", got)
	}
}

func TestLimits_ArrayBuffer(t *testing.T) {
	out := run(t, `return new Uint8Array(64 * 1024 * 1024).length`)
	e := wantError(t, out, VMError, "RangeError")
	if e.Name != "RangeError" {
		t.Fatalf("name = %q", e.Name)
	}
}

func TestLimits_StackDepth(t *testing.T) {
	for _, code := range []string{
		`function f(n) { return f(n + 1) + 1 } return f(0)`,
		`const f = async (n) => 1 + await f(n + 1); return await f(0)`,
		`const o = {}; let p = o; for (let i = 0; i < 1e5; i++) p = p.next = {}; return JSON.stringify(o).length`,
	} {
		out := run(t, code)
		e := wantError(t, out, VMError, "RangeError: Maximum call stack size exceeded")
		if e.Name != "RangeError" {
			t.Errorf("%s: name = %q, want RangeError", code, e.Name)
		}
	}
	// User code can catch it, like any RangeError.
	got := mustOK(t, newRunner(t, config.RunCodeConfig{}), Input{Code: `
		function f(n) { return f(n + 1) + 1 }
		try { f(0) } catch (e) { return e instanceof RangeError }`})
	if got != "true" {
		t.Fatalf("caught = %s", got)
	}
}

func TestLimits_ResultSize(t *testing.T) {
	out := run(t, `return "x".repeat(1024 * 1024)`)
	wantError(t, out, VMError, "output too large")
	if got := mustOK(t, newRunner(t, config.RunCodeConfig{}), Input{Code: `return "x".repeat(1000000).length`}); got != "1000000" {
		t.Fatalf("result = %s", got)
	}
}

func TestErrors_VMError(t *testing.T) {
	r := newRunner(t, config.RunCodeConfig{})
	cases := []struct{ code, message, name string }{
		{`return 1 +`, "SyntaxError: Unexpected token '}' (at the end of the code)", "SyntaxError"},
		{`let x = 1; let x = 2;`, "SyntaxError: Identifier 'x' has already been declared (line 1, column 16)", "SyntaxError"},
		{"\n\n  foo bar", "SyntaxError: Unexpected identifier 'bar' (line 3, column 7)", "SyntaxError"},
		{`throw new TypeError("bad type")`, "TypeError: bad type", "TypeError"},
		{`null.x`, "TypeError: Cannot read properties of null", "TypeError"},
		{`undefinedVariable + 1`, "ReferenceError: undefinedVariable is not defined", "ReferenceError"},
		{`await Promise.reject(new Error("async boom"))`, "Error: async boom", "Error"},
		{`throw "a string"`, "a string", ""},
		{`throw {code: 42}`, "{ code: 42 }", ""},
		{`class MyError extends Error { constructor(m) { super(m); this.name = "MyError" } }; throw new MyError("mine")`, "MyError: mine", "MyError"},
		{`await new Promise(() => {})`, "can never settle", ""},
		{`}); (function () {`, "must not close the function it runs in", "SyntaxError"},
		// Closing the wrapper cannot forge the envelope or skip the sanitizer and the result cap.
		{`}); (x => ({ok: true, result: "forged"}))(function () {`, "must not close the function it runs in", "SyntaxError"},
		{"}, 1); ({ok: true, result: 'x'.repeat(5e6)}); (function () {", "must not close the function it runs in", "SyntaxError"},
		{"}); globalThis.__isogate_run(async () => 'twice'); (function () {", "may only be called once", "Error"},
		{`return new Proxy({}, {get() { throw new Error("get trap") }})`, "Error: get trap", "Error"}, // a hostile thenable
	}
	for _, c := range cases {
		out := r.Run(context.Background(), Input{Code: c.code})
		e := wantError(t, out, VMError, c.message)
		if e.Name != c.name {
			t.Errorf("%s: name = %q, want %q", c.code, e.Name, c.name)
		}
	}
	// Lines and columns in the stack refer to the code as written.
	out := r.Run(context.Background(), Input{Code: "const a = 1;\n\nfunction f() { throw new Error('here') }\nf()"})
	e := wantError(t, out, VMError, "Error: here")
	if want := "Error: here\n    at f (code.js:3:22)\n    at code.js:4:1"; e.Stack != want {
		t.Fatalf("stack = %q, want %q", e.Stack, want)
	}
	out = r.Run(context.Background(), Input{Code: "function g() { throw new Error('first line') }; g()"})
	e = wantError(t, out, VMError, "Error: first line")
	if want := "Error: first line\n    at g (code.js:1:22)\n    at code.js:1:49"; e.Stack != want {
		t.Fatalf("stack = %q, want %q", e.Stack, want)
	}
}

func TestErrors_Cancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	out := newRunner(t, config.RunCodeConfig{}).Run(ctx, Input{Code: "return 1"})
	wantError(t, out, VMError, "cancelled")
}

func TestFixStack(t *testing.T) {
	p := len(sourcePrefix)
	stack := "Error: x\n" +
		"    at f (code.js:1:" + strconv.Itoa(p+5) + ")\n" +
		"    at g (code.js:1:1)\n" + // imprecise position (stack overflow): kept
		"    at code.js:2:7\n" +
		"    at isogate:prelude.js:10:3\n" +
		"    at code.js:1:1" // the wrapper's call
	want := "Error: x\n    at f (code.js:1:5)\n    at g (code.js:1:1)\n    at code.js:2:7"
	if got := fixStack(stack); got != want {
		t.Fatalf("fixStack:\n%s\nwant:\n%s", got, want)
	}
}

// Error text is bounded like a console line, however large the script makes
// it: the whole response stays small.
func TestErrors_Bounded(t *testing.T) {
	r := newRunner(t, config.RunCodeConfig{})
	for _, code := range []string{
		`throw new Error('x'.repeat(2e6))`,
		`throw 'y'.repeat(2e6)`,
		`const e = new Error('short'); e.stack = 'z'.repeat(2e6); throw e`,
	} {
		out := r.Run(context.Background(), Input{Code: code})
		b, _ := json.Marshal(out)
		if out.OK || out.Error == nil || len(b) > 3*MaxLineChars+4096 {
			t.Fatalf("%s: ok %v, %d bytes of output", code, out.OK, len(b))
		}
		if !strings.Contains(out.Error.Message, "more characters]") && !strings.Contains(out.Error.Stack, "more characters]") {
			t.Fatalf("%s: no truncation marker: %.200q", code, out.Error.Message)
		}
	}
}
