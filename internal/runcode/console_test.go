package runcode

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/isogate/isogate/config"
)

func TestConsole_Routing(t *testing.T) {
	out := run(t, `
		console.log("log"); console.info("info"); console.debug("debug");
		console.warn("warn"); console.error("error");
		console.log("a", 1, true, null, undefined);
		return "done"`)
	if !out.OK {
		t.Fatal(out.Error)
	}
	if got, want := strings.Join(out.Stdout, "|"), "log|info|debug|a 1 true null undefined"; got != want {
		t.Errorf("stdout = %q, want %q", got, want)
	}
	if got, want := strings.Join(out.Stderr, "|"), "warn|error"; got != want {
		t.Errorf("stderr = %q, want %q", got, want)
	}
	if len(out.Warnings) != 0 {
		t.Errorf("warnings = %q", out.Warnings)
	}
}

func TestConsole_Formatting(t *testing.T) {
	r := newRunner(t, config.RunCodeConfig{})
	cases := []struct{ code, want string }{
		{`console.log("raw string")`, `raw string`},
		{`console.log({a: 1, b: "x", "c-d": [1, 2]})`, `{ a: 1, b: 'x', 'c-d': [ 1, 2 ] }`},
		{`console.log([])`, `[]`},
		{`console.log({})`, `{}`},
		{`console.log(["it's", "line\nbreak"])`, `[ 'it\'s', 'line\nbreak' ]`},
		{`const o = {name: "o"}; o.self = o; console.log(o)`, `{ name: 'o', self: [Circular] }`},
		{`const a = [1]; a.push(a); console.log(a)`, `[ 1, [Circular] ]`},
		{`function foo() {}; console.log(foo, () => 1, class Bar {})`, `[Function: foo] [Function (anonymous)] [class Bar]`},
		{`console.log({f() {}})`, `{ f: [Function: f] }`},
		{`console.log(new Map([["k", 1], [2, {x: 1}]]))`, `Map(2) { 'k' => 1, 2 => { x: 1 } }`},
		{`console.log(new Set([1, "two"]))`, `Set(2) { 1, 'two' }`},
		{`console.log(new Date(0))`, `1970-01-01T00:00:00.000Z`},
		{`console.log(new Date(NaN))`, `Invalid Date`},
		{`console.log(/ab+c/gi)`, `/ab+c/gi`},
		{`console.log(10n, -0, NaN, Symbol("s"))`, `10n -0 NaN Symbol(s)`},
		{`console.log({e: new RangeError("r")})`, `{ e: [RangeError: r] }`},
		{`console.log(new Uint8Array([1, 2]))`, `Uint8Array(2) [ 1, 2 ]`},
		{`console.log(new ArrayBuffer(8))`, `ArrayBuffer { byteLength: 8 }`},
		{`class P { constructor() { this.x = 1 } }; console.log(new P())`, `P { x: 1 }`},
		{`console.log(Object.assign(Object.create(null), {a: 1}))`, `[Object: null prototype] { a: 1 }`},
		{`console.log({a: {b: {c: {d: {e: {f: 1}}}}}})`, `{ a: { b: { c: { d: [Object] } } } }`},
		{`console.log({get g() { throw new Error("no") }, set s(v) {}})`, `{ g: [Getter], s: [Setter] }`},
		{`console.log(Array.from({length: 102}, (_, i) => i).slice(0, 102))`, ``}, // checked below
		{`console.log("%s is %d years and %i days, %f%%", "Bob", 42.5, 3.9, 1.5)`, `Bob is 42.5 years and 3 days, 1.5%`},
		{`console.log("%o and %j", {a: [1]}, {b: 2}, "extra")`, `{ a: [ 1 ] } and {"b":2} extra`},
		{`console.log("%c styled", "color: red")`, ` styled`},
		{`console.log(new Promise(() => {}))`, `Promise { <state unknown> }`},
		{`console.log(new Proxy({}, {ownKeys() { throw new Error("trap") }}))`, `[Uninspectable: Error: trap]`},
		{`const p = Proxy.revocable({}, {}); p.revoke(); console.log(p.proxy)`, `[Uninspectable: TypeError: Cannot perform 'getPrototypeOf' on a proxy that has been revoked]`},
		{`console.log([new String("s"), new Number(1), new Boolean(false)])`, `[ [String: 's'], [Number: 1], [Boolean: false] ]`},
		{`console.dir("quoted")`, `'quoted'`},
		{`console.count(); console.count(); console.count("x")`, `default: 1|default: 2|x: 1`},
		{`console.group("g"); console.log("in"); console.groupEnd(); console.log("out")`, `g|  in|out`},
	}
	for _, c := range cases {
		out := r.Run(context.Background(), Input{Code: c.code})
		if !out.OK {
			t.Errorf("%s: %+v", c.code, out.Error)
			continue
		}
		got := strings.Join(out.Stdout, "|")
		if strings.Contains(c.code, "length: 102") {
			if !strings.HasPrefix(got, "[ 0, 1, 2,") || !strings.HasSuffix(got, "99, ... 2 more items ]") {
				t.Errorf("long array = %q", got)
			}
			continue
		}
		if got != c.want {
			t.Errorf("%s\n got %s\nwant %s", c.code, got, c.want)
		}
	}
}

func TestConsole_ErrorsAndAssert(t *testing.T) {
	out := run(t, `
		console.error(new TypeError("bad"));
		console.assert(1 === 1, "not shown");
		console.assert(1 === 2, "shown", 42);
		console.trace("here");`)
	if !out.OK || len(out.Stderr) != 3 {
		t.Fatalf("out = %+v", out)
	}
	if !strings.HasPrefix(out.Stderr[0], "TypeError: bad\n    at ") || !strings.Contains(out.Stderr[0], "code.js:2:") {
		t.Errorf("error line = %q, want the stack", out.Stderr[0])
	}
	if out.Stderr[1] != "Assertion failed: shown 42" {
		t.Errorf("assert line = %q", out.Stderr[1])
	}
	if !strings.HasPrefix(out.Stderr[2], "Trace: here\n    at code.js:5:") || strings.Contains(out.Stderr[2], "isogate:") ||
		strings.Contains(out.Stderr[2], "code.js:1:") {
		t.Errorf("trace line = %q", out.Stderr[2])
	}
}

func TestConsole_LineCap(t *testing.T) {
	for _, n := range []int{100, 101, 250} {
		out := run(t, fmt.Sprintf(`
			for (let i = 0; i < %d; i++) (i %% 2 ? console.error : console.log)("line " + i);
			return "finished"`, n))
		if !out.OK || string(out.Result) != `"finished"` {
			t.Fatalf("%d lines: %+v", n, out)
		}
		kept := min(n, MaxConsoleLines)
		if got := len(out.Stdout) + len(out.Stderr); got != kept {
			t.Errorf("%d lines: kept %d, want %d", n, got, kept)
		}
		if out.Stdout[0] != "line 0" || out.Stderr[0] != "line 1" {
			t.Errorf("%d lines: first lines %q %q", n, out.Stdout[0], out.Stderr[0])
		}
		if n <= MaxConsoleLines {
			if len(out.Warnings) != 0 {
				t.Errorf("%d lines: warnings %q", n, out.Warnings)
			}
			continue
		}
		want := fmt.Sprintf("console output truncated: %d more lines were dropped after the first 100", n-MaxConsoleLines)
		if len(out.Warnings) != 1 || out.Warnings[0] != want {
			t.Errorf("%d lines: warnings = %q, want %q", n, out.Warnings, want)
		}
	}
}

func TestConsole_LongLine(t *testing.T) {
	out := run(t, `console.log("y".repeat(25000))`)
	if !out.OK || len(out.Stdout) != 1 {
		t.Fatalf("out = %+v", out)
	}
	if want := strings.Repeat("y", MaxLineChars) + "... [15000 more characters]"; out.Stdout[0] != want {
		t.Errorf("line of %d characters, ends %q", len(out.Stdout[0]), out.Stdout[0][len(out.Stdout[0])-40:])
	}
}

func TestConsole_KeptOnError(t *testing.T) {
	out := run(t, `console.log("step 1"); console.warn("careful"); throw new Error("boom")`)
	wantError(t, out, VMError, "Error: boom")
	if len(out.Stdout) != 1 || out.Stdout[0] != "step 1" || len(out.Stderr) != 1 || out.Stderr[0] != "careful" {
		t.Fatalf("stdout %q stderr %q", out.Stdout, out.Stderr)
	}
}

func TestConsole_Replaceable(t *testing.T) {
	// Code may replace console; its own calls then bypass the host.
	out := run(t, `const lines = []; console.log = (x) => lines.push(x); console.log("mine"); return lines`)
	if !out.OK || string(out.Result) != `["mine"]` || len(out.Stdout) != 0 {
		t.Fatalf("out = %+v", out)
	}
}

// The Go side enforces the caps on its own, whatever the prelude sends.
func TestConsoleBuffer(t *testing.T) {
	var c consoleBuffer
	for i := range 130 {
		stream := "stdout"
		if i%3 == 0 {
			stream = "stderr"
		}
		left, err := c.write([]byte(fmt.Sprintf(`[%q, "line %d"]`, stream, i)))
		if err != nil {
			t.Fatal(err)
		}
		if want := max(MaxConsoleLines-i-1, 0); string(left) != fmt.Sprint(want) {
			t.Fatalf("line %d: %s lines left, want %d", i, left, want)
		}
	}
	c.write([]byte(`["stdout"]`)) // a line the prelude did not format: counted
	c.write([]byte(`["stdout", "` + strings.Repeat("z", MaxLineChars+100) + `"]`))
	if _, err := c.write([]byte(`{}`)); err == nil {
		t.Fatal("bad call accepted")
	}
	stdout, stderr, warnings := c.collect([]string{"earlier"})
	if len(stdout)+len(stderr) != MaxConsoleLines || stderr[0] != "line 0" || stdout[0] != "line 1" {
		t.Fatalf("kept %d + %d lines", len(stdout), len(stderr))
	}
	want := []string{"earlier", "console output truncated: 32 more lines were dropped after the first 100"}
	if strings.Join(warnings, "|") != strings.Join(want, "|") {
		t.Fatalf("warnings = %q", warnings)
	}
	if got := truncateLine(strings.Repeat("é", MaxLineChars+100)); got != strings.Repeat("é", MaxLineChars)+"... [100 more characters]" {
		t.Fatalf("truncateLine kept %d characters", len([]rune(got)))
	}
}
