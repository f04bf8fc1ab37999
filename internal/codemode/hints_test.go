package codemode

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/isogate/isogate/internal/backend"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// errCaller answers every call with one error.
type errCaller struct{ err error }

func (c errCaller) CallTool(context.Context, string, string, json.RawMessage) (*mcp.CallToolResult, error) {
	return nil, c.err
}

// TestHintsFollowCodesNotText proves that backend hints switch on the
// error's code: the same code under any message text gives the same hint,
// and a code-less error whose text reads like a backend failure gives none.
func TestHintsFollowCodesNotText(t *testing.T) {
	const prog = `return await everything.get_sum({a: 1, b: 2})`
	f := newFixture(t, Options{})
	for _, c := range []struct {
		sentinel error
		hint     string
	}{
		{backend.ErrStarting, "has not finished connecting"},
		{backend.ErrTimeout, "backends.everything.timeout"},
		{backend.ErrUnavailable, "Backend `everything` is unavailable"},
		{backend.ErrConnectionLost, "The connection to backend `everything` broke while the call was in flight: the call may or may not have run, so it was not retried"},
	} {
		for _, text := range []string{"opaque words", "something else entirely"} {
			f.engine.opts.Caller = errCaller{fmt.Errorf("%s: %w", text, c.sentinel)}
			f.fails(t, prog, c.hint)
		}
	}
	f.engine.opts.Caller = errCaller{errors.New(`backend "everything" is unavailable: backend "everything" did not answer within 1s`)}
	if r := f.fails(t, prog); strings.Contains(r.Text, "isogate://backend/") || strings.Contains(r.Text, "backends.everything.timeout") {
		t.Fatalf("a code-less error got a backend hint: %s", r.Text)
	}
}

// TestUnwrappedResultHint: reading a tool result as the MCP envelope
// (r.content[0].text), the commonest habit, fails with a TypeError that
// gets a hint saying results are already unwrapped, naming the tool as the
// program calls it; a TypeError that has nothing to do with a tool result
// gets none.
func TestUnwrappedResultHint(t *testing.T) {
	f := newFixture(t, Options{})
	for code, call := range map[string]string{
		"const r = await everything.get_sum({a: 1, b: 2});\nreturn r.content[0].text":              "everything.get_sum",
		"const r = await everything.add({a: 1, b: 2});\nreturn r.structuredContent.sum.toFixed(1)": "everything.add",
		`const r = await everything["get-sum"]({a: 1, b: 2}); return r["content"][0]`:              "everything.get_sum",
	} {
		f.fails(t, code, "TypeError: Cannot read properties of undefined",
			"Hint: A tool call in a program returns its result already unwrapped",
			"`const r = await "+call+"({...})`")
	}
	if r := f.fails(t, "const x = {}; return x.content[0]", "TypeError"); strings.Contains(r.Text, "unwrapped") {
		t.Fatalf("a program without tool calls got the hint: %s", r.Text)
	}
	if r := f.fails(t, "await everything.add({a: 1, b: 2}); const x = {}; return x.a.b", "TypeError"); strings.Contains(r.Text, "unwrapped") {
		t.Fatalf("a TypeError unrelated to a result envelope got the hint: %s", r.Text)
	}
}

// TestThrownValueHint: a program that throws something other than an Error
// (an object, a string, undefined) fails with that value and no stack or
// line, and gets a hint saying so and what to throw instead; a thrown
// Error, and a main promise that waits for nothing, get none.
func TestThrownValueHint(t *testing.T) {
	f := newFixture(t, Options{})
	const hint = "The program threw a value that is not an Error"
	for code, msg := range map[string]string{
		`throw {reason: "nope", n: 1}`: `{"reason":"nope","n":1}`,
		`throw "plain string"`:         "plain string",
		`throw undefined`:              "undefined",
		`await everything.add({a: 1, b: 1}); throw {name: "Quota"}`: "Quota",
	} {
		f.fails(t, code, msg, "Hint: "+hint, "throw `new Error(")
	}
	for _, code := range []string{`throw new Error("boom")`, `await new Promise(() => {})`, `null.x`} {
		if r := f.fails(t, code); strings.Contains(r.Text, hint) {
			t.Fatalf("%s: got the thrown-value hint:\n%s", code, r.Text)
		}
	}
}

// TestNeverSettlesHint: a program awaiting a promise nothing will settle
// (a resolve never called, a returned thenable that never calls back) is
// told what usually causes it.
func TestNeverSettlesHint(t *testing.T) {
	f := newFixture(t, Options{})
	for _, code := range []string{"await new Promise((resolve) => {});\nreturn 1", "return {then() {}}"} {
		f.fails(t, code, "the main promise can never settle",
			"Hint: The program awaits a promise that nothing will settle: a `new Promise(...)` whose resolve is never called")
	}
}

// TestTimeoutWithoutCallHint: a run whose deadline comes while no tool
// call is in flight (an endless loop, after a call or not) is told its own
// code was running; one that times out waiting for a call is not.
func TestTimeoutWithoutCallHint(t *testing.T) {
	f := newFixture(t, Options{})
	const hint = "Hint: No tool call was in flight when the deadline came: the program's own code was still running"
	for _, code := range []string{`while (true) {}`, "await everything.add({a: 1, b: 1});\nwhile (true) {}"} {
		r := f.engine.Execute(context.Background(), Request{Code: code, Timeout: Millis(1000)})
		if !r.IsError || !strings.Contains(r.Text, "TIMEOUT: execution exceeded 1000 ms\n\n"+hint) {
			t.Fatalf("%s: %s", code, r.Text)
		}
	}
	r := f.engine.Execute(context.Background(), Request{Code: `return await everything.meet({calls: 2})`, Timeout: Millis(1000)})
	if !r.IsError || !strings.Contains(r.Text, "while waiting for everything.meet") || strings.Contains(r.Text, "No tool call was in flight") {
		t.Fatal(r.Text)
	}
}

// TestStackShowsProgramFrames: an error's stack lists the program's frames
// only: a tool failure nobody caught (its error is built in the engine's
// bootstrap) and require (the bridge prelude) show no frame of the
// gateway's own scripts, and the program's own frames keep its lines.
func TestStackShowsProgramFrames(t *testing.T) {
	f := newFixture(t, Options{})
	for code, want := range map[string]string{
		"const a = 1;\nawait everything.fail({})":            "quota exceeded",
		"const a = 1;\nconst fs = require('fs');\nreturn fs": "at main (program.js:2:12)",
		"function g() { null.x }\ng()":                       "at g (program.js:1:21)\n    at main (program.js:2:1)",
	} {
		r := f.fails(t, code, want)
		if strings.Contains(r.Text, "<embedded>") || strings.Contains(r.Text, "isogate:prelude.js") {
			t.Fatalf("%q: the stack shows the gateway's own frames:\n%s", code, r.Text)
		}
	}
}

// TestLastExpressionPositions: a program ending with an expression (its
// value is the result) reports an error in that expression at the user's
// column, in JavaScript and in TypeScript, not shifted by what the engine
// wraps the expression in to return it.
func TestLastExpressionPositions(t *testing.T) {
	f := newFixture(t, Options{})
	for code, want := range map[string]string{
		"const a = 1;\nnull.x":                            "(line 2, column 6)\nStack:\n    at main (program.js:2:6)",
		"everything.get_summ({a: 1, b: 2})":               "(line 1, column 12)",
		"const a: number = 1;\nnull.x":                    "(line 2, column 6)",
		"const a = 1; null.x":                             "(line 1, column 19)",
		"const a = 1;\n[1,\n  null.x]":                    "(line 3, column 8)",
		"function g() { null.x }\ng()":                    "at g (program.js:1:21)\n    at main (program.js:2:1)",
		"function g(): void { null.x }\nconst b = 2; g()": "at main (program.js:2:14)",
	} {
		f.fails(t, code, want)
	}
}
