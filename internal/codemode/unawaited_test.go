package codemode

import (
	"context"
	"strings"
	"testing"
)

// TestUnawaitedCallsComplete: a program that ends with tool calls in flight
// gets them completed, not cancelled, and the result names them.
func TestUnawaitedCallsComplete(t *testing.T) {
	f := newFixture(t, Options{})
	// meet({calls: 2}) returns only once two calls are inside it at once:
	// the run must keep both running after the program returned.
	r := f.ok(t, `everything.meet({calls: 2}); everything.meet({calls: 2}); return "done"`)
	text := r.Render()
	for _, want := range []string{"done\n\n[notice] 2 calls to everything.meet were not awaited; they completed"} {
		if !strings.Contains(text, want) {
			t.Fatalf("lacks %q:\n%s", want, text)
		}
	}
	if r.UnawaitedCalls != 2 || r.ToolCalls != 2 || r.Record.UnawaitedCalls != 2 {
		t.Fatalf("unawaited %d, tool calls %d, record %d", r.UnawaitedCalls, r.ToolCalls, r.Record.UnawaitedCalls)
	}
	if f.peak.Load() < 2 {
		t.Fatalf("the two calls never ran together (peak %d)", f.peak.Load())
	}

	// forEach(async …): each callback's call is left running.
	r = f.ok(t, `[1, 2, 3].forEach(async (n) => { await everything.add({a: n, b: n}); }); return 1`)
	if !strings.Contains(r.Render(), "3 calls to everything.add were not awaited; they completed") {
		t.Fatal(r.Render())
	}

	// A settled un-awaited call that starts another: both complete.
	r = f.ok(t, `everything.add({a: 1, b: 1}).then(() => Promise.resolve()).then(() => everything.add({a: 2, b: 2})); return 1`)
	if !strings.Contains(r.Render(), "2 calls to everything.add were not awaited; they completed") {
		t.Fatal(r.Render())
	}

	// A failed un-awaited call says how it failed.
	r = f.ok(t, `everything.fail({}); return 1`)
	if !strings.Contains(r.Render(), "1 call to everything.fail was not awaited; it failed (Error: everything.fail failed: quota exceeded)") {
		t.Fatal(r.Render())
	}

	// Awaited calls give no notice.
	r = f.ok(t, `await everything.add({a: 1, b: 2}); return await Promise.all([everything.add({a: 1, b: 1})])`)
	if len(r.Notices) != 0 || r.UnawaitedCalls != 0 {
		t.Fatalf("notices for awaited calls: %v", r.Notices)
	}
}

// TestMissingAwaitHint: reading a property of a tool call's promise is
// named as a missing await.
func TestMissingAwaitHint(t *testing.T) {
	f := newFixture(t, Options{})
	r := f.ok(t, "const r = everything.get_sum({a: 1, b: 2});\nreturn r.content")
	text := r.Render()
	// The example calls the tool by the identifier a program can use
	// (get_sum), never its hyphenated name (read as a subtraction).
	for _, want := range []string{"null", "missing await? The program read `.content` from the Promise that everything.get_sum returned",
		"e.g. `(await everything.get_sum({...})).content`", "1 call to everything.get-sum was not awaited; it completed"} {
		if !strings.Contains(text, want) {
			t.Fatalf("lacks %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, "await everything.get-sum") {
		t.Fatalf("the example uses the hyphenated name:\n%s", text)
	}
	r = f.ok(t, "return {sum: everything.get_sum({a: 1, b: 2})}")
	if !strings.Contains(r.Render(), `missing await? The result contains a Promise`) {
		t.Fatal(r.Render())
	}
	// A program's thrown error still carries the notice.
	r = f.exec(t, "everything.add({a: 1, b: 1}); throw new Error('stop')")
	if !r.IsError || !strings.Contains(r.Render(), "1 call to everything.add was not awaited; it completed") {
		t.Fatal(r.Render())
	}
}

// TestUnawaitedCallsEndBeforeTheDeadline: a call that never ends does not
// cost the program its value: the run stops waiting shortly before its
// deadline and says the call was cancelled.
func TestUnawaitedCallsEndBeforeTheDeadline(t *testing.T) {
	f := newFixture(t, Options{})
	r := f.engine.Execute(context.Background(), Request{Code: `everything.meet({calls: 99}); return "value"`, Timeout: Millis(300)})
	if r.IsError {
		t.Fatal(r.Render())
	}
	if !strings.Contains(r.Render(), "1 call to everything.meet was not awaited; it had not finished near the run's deadline and was cancelled") {
		t.Fatal(r.Render())
	}
}

// TestStringResultIsText: a string result reaches the agent as its text,
// not JSON-escaped; other values stay JSON.
func TestStringResultIsText(t *testing.T) {
	f := newFixture(t, Options{})
	if r := f.ok(t, `return "line1\nline2 \"quoted\""`); r.Text != "line1\nline2 \"quoted\"" {
		t.Fatalf("%q", r.Text)
	}
	if r := f.ok(t, `return ["a\nb"]`); r.Text != "[\n  \"a\\nb\"\n]" {
		t.Fatalf("%q", r.Text)
	}
}

// TestTimeoutUnitHint: a timeout that reads like seconds gets a hint about
// the unit when the run times out.
func TestTimeoutUnitHint(t *testing.T) {
	f := newFixture(t, Options{})
	r := f.engine.Execute(context.Background(), Request{Code: `while (true) {}`, Timeout: Millis(30)})
	if !r.IsError || !strings.Contains(r.Text, "TIMEOUT: execution exceeded 30 ms") ||
		!strings.Contains(r.Text, "Hint: `timeout` is in milliseconds: 30 means 30 ms. For 30 seconds pass 30000") {
		t.Fatal(r.Text)
	}
}

// TestUnawaitedHooksAreHidden: the bridge's report and wait functions are
// gone before user code runs, and a program calling the completion hook
// itself changes nothing of its result.
func TestUnawaitedHooksAreHidden(t *testing.T) {
	f := newFixture(t, Options{})
	r := f.ok(t, `return [typeof __isogate_settled, typeof __isogate_grace, typeof __isogate_tick, typeof __isogate_call].join(",")`)
	if r.Text != "undefined,undefined,undefined,undefined" {
		t.Fatal(r.Text)
	}
	r = f.ok(t, `await __isogate_finish(Promise.resolve(1)); return await everything.add({a: 1, b: 1})`)
	if !strings.Contains(r.Text, `"sum": 2`) || len(r.Notices) != 0 {
		t.Fatalf("%s %v", r.Text, r.Notices)
	}
}

// TestTimeoutNamesTheCallInFlightInV8: a V8 run that times out while it
// awaits a call names that call, although the sandbox ends the call
// before it reports its timeout.
func TestTimeoutNamesTheCallInFlightInV8(t *testing.T) {
	f := newFixture(t, Options{})
	r := f.engine.Execute(context.Background(), Request{Code: `await everything.add({a: 1, b: 1}); return await everything.meet({calls: 99})`, Timeout: Millis(300)})
	if !r.IsError || !strings.HasPrefix(r.Text, "TIMEOUT: execution exceeded 300 ms while waiting for everything.meet") {
		t.Fatal(r.Text)
	}
}
