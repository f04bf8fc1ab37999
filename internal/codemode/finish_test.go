package codemode

import (
	"slices"
	"strings"
	"testing"
)

// TestFinishFastAndSlowAgree: the bridge's completion (finish in
// bridge.js) passes a program's outcome straight through when no tool
// call is pending at the end (the fast path), and waits for the pending
// calls with a promise chain otherwise (the slow path). Each program runs
// twice, as the body of a try statement: once with an empty finally block
// (fast), once with a finally block that starts a tool call nobody awaits
// (slow: the call is made only once the script waits, so it is pending
// when the program ends, whatever the program awaited before; its "not
// awaited" notice proves the slow path ran). Both must give the same
// value, error (position included: the lines are the same) and
// missing-await notices.
func TestFinishFastAndSlowAgree(t *testing.T) {
	f := newFixture(t, Options{})
	programs := []string{
		"return 1",
		"return 'text'",
		"return true",
		"return null",
		"return",
		"return undefined",
		"return NaN",
		"return 10n",
		"return {a: [1, 2, {b: 'c'}], d: new Date(0), m: new Map([['k', 1]]), s: new Set([1])}",
		"return [undefined, () => 1, Symbol('s')]",
		"const o = {}; o.self = o; return o",
		"return Promise.resolve({later: true})",
		"await null; await Promise.resolve(); return 2",
		"return {then(resolve) { resolve(5) }}",
		"return {p: Promise.resolve(1)}",
		"throw new Error('stop')",
		"throw 42",
		"throw {code: 'X'}",
		"return Promise.reject(new TypeError('rejected'))",
		"await Promise.reject(new RangeError('awaited'))",
		"null.x",
		"const r = await everything.add({a: 1, b: 2});\nreturn r",
		"const p = everything.add({a: 1, b: 2});\nconst s = p.sum;\nawait p;\nreturn s", // a forgotten await, read before the call settled
	}
	for _, body := range programs {
		fast := f.exec(t, "try {\n"+body+"\n} finally { void 0 }")
		slow := f.exec(t, "try {\n"+body+"\n} finally { everything.add({a: 0, b: 0}) }")
		if fast.UnawaitedCalls != 0 || slow.UnawaitedCalls != 1 {
			t.Fatalf("%q: unawaited calls fast %d, slow %d (want 0 and 1: the slow run did not wait)", body, fast.UnawaitedCalls, slow.UnawaitedCalls)
		}
		if fast.IsError != slow.IsError || fast.Code != slow.Code || string(fast.Value) != string(slow.Value) || fast.Text != slow.Text {
			t.Fatalf("%q: fast and slow completions differ:\nfast %v %s %s %q\nslow %v %s %s %q", body,
				fast.IsError, fast.Code, fast.Value, fast.Text, slow.IsError, slow.Code, slow.Value, slow.Text)
		}
		for _, n := range fast.Notices {
			if !slices.Contains(slow.Notices, n) {
				t.Fatalf("%q: the slow run lacks the notice %q: %q", body, n, slow.Notices)
			}
		}
		if want := "1 call to everything.add was not awaited"; !strings.Contains(strings.Join(slow.Notices, "\n"), want) {
			t.Fatalf("%q: slow run's notices lack %q: %q", body, want, slow.Notices)
		}
	}
	// The forgotten await of the fast path is still reported.
	r := f.exec(t, "const p = everything.add({a: 1, b: 2});\nconst s = p.sum;\nawait p;\nreturn s")
	if !strings.Contains(r.Render(), "missing await? The program read `.sum`") {
		t.Fatal(r.Render())
	}
}
