package codemode

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/isogate/isogate/internal/codemode/output"
	"github.com/isogate/isogate/internal/resultstore"
	"github.com/isogate/isogate/v8sandbox"
)

func TestTiers_FastPathsSkipV8AndMatchV8(t *testing.T) {
	f := newFixture(t, Options{})
	direct := f.ok(t, `{"tool": "everything.get-sum", "arguments": {"a": 2, "b": 3}}`)
	simple := f.ok(t, "const r = await everything.get_sum({a: 2, b: 3,})\nreturn r")
	bracket := f.ok(t, `return await everything["get-sum"]({'a': 2, "b": 3})`)
	if n := f.runner.runs.Load(); n != 0 {
		t.Fatalf("tiers 1-2 started V8 %d times", n)
	}
	if direct.Tier != TierDirect || simple.Tier != TierSimpleCall || bracket.Tier != TierSimpleCall {
		t.Fatalf("tiers = %s %s %s", direct.Tier, simple.Tier, bracket.Tier)
	}
	v8 := f.ok(t, "const args = {a: 2, b: 3};\nconst r = await everything.get_sum(args);\nreturn r;")
	if v8.Tier != TierV8 || f.runner.runs.Load() != 1 {
		t.Fatalf("tier %s, runs %d", v8.Tier, f.runner.runs.Load())
	}
	for _, r := range []Response{direct, simple, bracket} {
		if r.Text != v8.Text {
			t.Fatalf("fast tier text %q differs from V8's %q", r.Text, v8.Text)
		}
	}
	if v8.Text != `The sum of 2 and 3 is 5.` { // a string result is its text
		t.Fatalf("text = %q", v8.Text)
	}
	// Structured content with characters JSON encoders disagree on.
	a := f.ok(t, `return await everything.add({a: 1.5, b: 1e21})`)
	b := f.ok(t, `const x = {a: 1.5, b: 1e21}; return await everything.add(x)`)
	if a.Text != b.Text || !strings.Contains(a.Text, "<&>\u2028") {
		t.Fatalf("structured: fast %q vs V8 %q", a.Text, b.Text)
	}
}

func TestIntrospection(t *testing.T) {
	f := newFixture(t, Options{})
	fast := f.ok(t, `return __interfaces`)
	slow := f.ok(t, `const i = __interfaces; return i`)
	if fast.Text != slow.Text || !strings.Contains(fast.Text, `"get-sum"`) || !strings.Contains(fast.Text, "Returns the sum") {
		t.Fatalf("__interfaces: fast %d bytes, V8 %d bytes\n%s", len(fast.Text), len(slow.Text), fast.Text[:200])
	}
	one := f.ok(t, `return __getToolInterface("everything.get-sum")`)
	bare := f.ok(t, `const n = "get-sum"; return __getToolInterface(n)`)
	if one.Text != bare.Text || !strings.Contains(one.Text, `"input_schema"`) {
		t.Fatalf("__getToolInterface: %s vs %s", one.Text, bare.Text)
	}
	f.fails(t, `return __getToolInterface("everything.get-summ")`, `did you mean everything.get-sum`)
	// Suggestions compare a name with every tool: a run gets a bounded number.
	r := f.ok(t, `const out = [];
		for (let i = 0; i < 20; i++) { try { __getToolInterface("everything.get-summ") } catch (e) { out.push(e.message.includes("did you mean")) } }
		return out.filter(Boolean).length`)
	if r.Text != fmt.Sprint(maxSuggestionsPerRun) {
		t.Fatalf("suggestions made: %s, want %d", r.Text, maxSuggestionsPerRun)
	}
}

func TestBridgeNamesAndMirrors(t *testing.T) {
	f := newFixture(t, Options{})
	r := f.ok(t, `return [
		globalThis["my-backend"] === my_backend,
		typeof globalThis.everything["get-sum"],
		everything.get_sum === everything["get-sum"],
		everything.get_sum.name,
		typeof require, typeof process, typeof fetch,
	]`)
	want := "[\n  true,\n  \"function\",\n  true,\n  \"get_sum\",\n  \"function\",\n  \"undefined\",\n  \"undefined\"\n]"
	if r.Text != want {
		t.Fatalf("got %s", r.Text)
	}
	f.fails(t, `require("fs")`, `require("fs") is not available`)
	echo := f.ok(t, `const m = "hi"; return await my_backend.echo({message: m})`)
	if !strings.Contains(echo.Text, `"message": "hi"`) {
		t.Fatal(echo.Text)
	}
}

func TestTypeScriptAndModuleForms(t *testing.T) {
	f := newFixture(t, Options{})
	cases := map[string]string{
		"interfaces and generics": `interface Sum { total: number }
function first<T>(xs: T[]): T { return xs[0]; }
const r: string = await everything.get_sum({a: 1, b: 1}) as string;
const s: Sum = { total: Number(r.match(/is (\d+)/)![1]) };
return first<Sum>([s]).total;`,
		"top-level await and return": `const x = await Promise.resolve(2);
if (x > 1) return x;
return 0;`,
		"export default": `export default async function () { return 2 }`,
		"export main":    `export async function main() { const v: number = 2; return v }`,
	}
	for name, code := range cases {
		t.Run(name, func(t *testing.T) {
			if r := f.ok(t, code); r.Text != "2" {
				t.Fatalf("got %s", r.Text)
			}
		})
	}
}

func TestPromiseAllRunsCallsConcurrently(t *testing.T) {
	f := newFixture(t, Options{})
	var progress []int
	r := f.engine.Execute(context.Background(), Request{
		Code:       `const rs = await Promise.all([1,2,3,4,5].map(() => everything.meet({calls: 5}))); return rs.length`,
		OnToolCall: func(done int, tool string) { progress = append(progress, done) },
	})
	if r.IsError || r.Text != "5" {
		t.Fatalf("%v %s", r.IsError, r.Text)
	}
	if f.peak.Load() != 5 {
		t.Fatalf("peak concurrent backend calls = %d, want 5", f.peak.Load())
	}
	if len(progress) != 5 || progress[4] != 5 {
		t.Fatalf("progress = %v", progress)
	}
}

func TestErrors(t *testing.T) {
	f := newFixture(t, Options{})
	r := f.fails(t, "const a = 1;\nconst b = 2;\nthrow new Error('bad ' + (a + b));", "Error: bad 3", "(line 3,", "program.js:3:")
	if r.Code != v8sandbox.CodeEval {
		t.Fatalf("code %s", r.Code)
	}
	// The stack names only the program's lines: the wrapper's closing
	// line (line 2 of a one-line program) is no frame of the program.
	if r := f.fails(t, "throw new Error('stop')", "program.js:1:7"); strings.Contains(r.Text, "program.js:2") {
		t.Fatalf("a frame past the program's last line:\n%s", r.Text)
	}
	f.fails(t, "const x = 1;\nconst = 2;", "SyntaxError", "line 2")
	// An error esbuild finds past the program (an unclosed brace or string
	// reaches the wrapper's closing lines) is at the program's end, as
	// written: never on a line the program does not have.
	for code, want := range map[string]string{
		"return {a: 1":                    "SyntaxError: Unexpected end of file (line 1, column 13)",
		"return {a: 1\n\n":                "SyntaxError: Unexpected end of file (line 1, column 13)",
		"const a = 1;\nreturn [a, {b: 2}": "(line 2, column 18)",
		"return `abc":                     "(line 1, column 12)",
	} {
		if r := f.fails(t, code, want); strings.Count(r.Text, "(line ") != 1 {
			t.Fatalf("%q: %s", code, r.Text)
		}
	}
	// A backend isError rejects the promise: catchable.
	caught := f.ok(t, `try { await everything.fail({}) } catch (e) { return "caught: " + e.message }`)
	if caught.Text != `caught: everything.fail failed: quota exceeded` {
		t.Fatalf("got %s", caught.Text)
	}
	// Uncaught, in each tier.
	for _, code := range []string{`{"tool":"everything.fail"}`, `return await everything.fail({})`, `const x = await everything.fail({}); return x`} {
		f.fails(t, code, "everything.fail failed: quota exceeded")
	}
	// Images become descriptors, several blocks an array.
	img := f.ok(t, `return await everything.tiny_image({})`)
	if !strings.Contains(img.Text, `"mimeType": "image/png"`) || !strings.Contains(img.Text, `"size": 68`) || !strings.Contains(img.Text, `"an image:"`) {
		t.Fatalf("image: %s", img.Text)
	}
}

func TestConsoleCapture(t *testing.T) {
	f := newFixture(t, Options{ConsoleLines: 3})
	r := f.ok(t, `console.log("a", 1, {b: [2]}); console.warn("careful"); console.error(new Error("e1")); console.info("x"); console.debug("y"); return 1`)
	if len(r.Console) != 4 || r.Console[0] != `a 1 {"b":[2]}` || r.Console[1] != "[warn] careful" ||
		!strings.HasPrefix(r.Console[2], "[error] Error: e1") || r.Console[3] != "[console: 2 more lines dropped after the first 3]" {
		t.Fatalf("console = %q", r.Console)
	}
	if !strings.Contains(r.Render(), "[console]\na 1") {
		t.Fatalf("text lacks console: %s", r.Text)
	}
	failed := f.fails(t, `console.log("before"); throw new Error("after")`, "Error: after")
	if len(failed.Console) != 1 {
		t.Fatalf("console on failure = %q", failed.Console)
	}
}

func TestErrorHints(t *testing.T) {
	f := newFixture(t, Options{})
	f.fails(t, `const everything = await everything.get_sum({a: 1, b: 2}); return everything`,
		"`everything` is a backend", "everythingResult")
	f.fails(t, `return await everythin.get_sum({a: 1, b: 2})`, "did you mean `everything`")
	f.fails(t, `return await search_tools({query: "sum"})`, "`search_tools` is an MCP tool of the gateway")
	f.fails(t, `return await get_sum({a: 1, b: 2})`, "`get_sum` may be a tool; call it as everything.get_sum({...})")
	f.fails(t, `return await everything.get_summ({a: 1, b: 2})`, "did you mean `everything.get_sum`")
	// Names of no sane length are not matched against the tools (that cost
	// an edit distance per tool), even when they start like one: the
	// error-message patterns and catalog.Closest both bound them.
	long := f.fails(t, "return await everything.get_sum"+strings.Repeat("x", 100)+"({a: 1, b: 2})", "is not a function")
	if strings.Contains(long.Text, "did you mean") {
		t.Fatalf("hint for a 107-character name: %s", long.Text)
	}
	// A backend that cannot be reached.
	down := newFixture(t, Options{})
	down.engine.opts.Caller = downCaller{}
	down.fails(t, `const r = await everything.get_sum({a: 1, b: 2}); return r`,
		`backend "everything" is un`, `exec: "nope": executable file not found`, "isogate://backend/everything")
	// A program error does not blame a healthy backend.
	r := f.fails(t, `const r = await everything.get_sum({a: 1, b: 2}); throw new Error("backend \"everything\" failed")`)
	if strings.Contains(r.Text, "isogate://backend/") {
		t.Fatalf("hint blames the backend: %s", r.Text)
	}
}

func TestOutputPipeline(t *testing.T) {
	shaping := output.DefaultOptions()
	shaping.MaxOutputSize = 3000
	f := newFixture(t, Options{Output: shaping})
	// Auto-chunk: a uniform array collapses, the full result stays retrievable.
	r := f.ok(t, `const items = await everything.items({n: 200}); return items`)
	if !r.Shaped.Chunked || r.Shaped.StoredID == "" || !strings.Contains(r.Text, "isogate://result/"+r.Shaped.StoredID) {
		t.Fatalf("not chunked: %s", r.Text)
	}
	full, err := f.store.Get(context.Background(), "", r.Shaped.StoredID)
	if err != nil || !strings.Contains(string(full), "Issue number 200") {
		t.Fatalf("full result not retrievable: %v", err)
	}
	if part, err := resultstore.Lookup(full, "199/title"); err != nil || !strings.Contains(string(part), "Issue number 200") {
		t.Fatalf("path: %q %v", part, err)
	}
	if !strings.Contains(r.Text, "[Output: ") {
		t.Fatalf("no footer: %s", r.Text)
	}
	// Intent filter keeps the matching sections.
	ri := f.engine.Execute(context.Background(), Request{Intent: "17",
		Code: `const items = await everything.items({n: 60}); return items.map(i => i.title + " is " + i.state + ": " + i.body)`})
	if ri.IsError || !ri.Shaped.Filtered || !strings.Contains(ri.Text, "Issue number 17 is") || strings.Contains(ri.Text, "Issue number 16 is") {
		t.Fatalf("intent filter: %s", ri.Text)
	}
	// Truncation keeps head and tail.
	rt := f.ok(t, `return Array.from({length: 2000}, (_, i) => "line " + i).join("\n")`)
	if !rt.Shaped.Truncated || !strings.Contains(rt.Text, "line 0") || !strings.Contains(rt.Text, "line 1999") || len(rt.Text) > 3000 {
		t.Fatalf("truncation: %d bytes", len(rt.Text))
	}
	// Stages can be turned off.
	plain := newFixture(t, Options{Output: output.Options{MaxOutputSize: 1 << 20, IntentMinBytes: 1}})
	rp := plain.ok(t, `return await everything.items({n: 200})`)
	if rp.Shaped.Chunked || rp.Shaped.Truncated || strings.Contains(rp.Text, "[Output:") {
		t.Fatalf("stages ran while disabled")
	}
	tiers, processed, returned := f.runs.byTier()
	if processed <= returned || tiers["v8"] != 2 || tiers["simple"] != 1 {
		t.Fatalf("observer not told: %v, %d processed, %d returned", tiers, processed, returned)
	}
}

func TestLimitsMidChain(t *testing.T) {
	f := newFixture(t, Options{HeapMB: 32})
	// The deadline must strike once the console line is written and a call
	// made: a short one can strike before that on a loaded machine (an
	// empty console, rightly), so a run whose call never completed is
	// tried again with a longer one.
	for timeout := 300 * time.Millisecond; ; timeout *= 2 {
		f.engine.opts.Timeout = timeout
		var called atomic.Bool
		r := f.engine.Execute(context.Background(), Request{
			Code:       `console.log("spinning"); await everything.get_sum({a: 1, b: 2}); for (;;) {}`,
			OnToolCall: func(int, string) { called.Store(true) }})
		if !r.IsError || r.Code != v8sandbox.CodeTimeout || !strings.Contains(r.Text, fmt.Sprintf("execution exceeded %d ms", timeout.Milliseconds())) {
			t.Fatalf("a program spinning after its call, deadline %v: %s %s", timeout, r.Code, r.Text)
		}
		if !called.Load() && timeout < 10*time.Second {
			t.Logf("the deadline of %v struck before the call completed; trying a longer one", timeout)
			continue
		}
		if !strings.Contains(r.Render(), "[console]\nspinning") {
			t.Fatalf("console lost on timeout: %q", r.Render())
		}
		break
	}
	f.engine.opts.Timeout = 20 * time.Second
	r := f.fails(t, `await everything.get_sum({a: 1, b: 2}); const a = []; for (;;) a.push({x: [1, 2, 3]})`, "HEAP_LIMIT")
	if r.Code != v8sandbox.CodeHeapLimit {
		t.Fatal(r.Code)
	}
	if ok := f.ok(t, `const v = await everything.get_sum({a: 1, b: 2}); return v`); !strings.Contains(ok.Text, "3") {
		t.Fatal(ok.Text)
	}
}

func TestConcurrencyLimit(t *testing.T) {
	f := newFixture(t, Options{MaxConcurrent: 1, Timeout: time.Minute})
	// The first run takes the only slot, says so with a tool call, then
	// spins until cancelled.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	holding := make(chan struct{})
	done := make(chan Response)
	go func() {
		done <- f.engine.Execute(ctx, Request{Code: `await everything.get_sum({a: 1, b: 2}); for(;;){}`,
			OnToolCall: func(int, string) { close(holding) }})
	}()
	select {
	case <-holding:
	case r := <-done:
		t.Fatalf("first run ended: %s", r.Text)
	case <-time.After(20 * time.Second):
		t.Fatal("the first run never made its tool call")
	}
	r := f.engine.Execute(context.Background(), Request{Code: `const x = 1; return x`, Timeout: 200 * time.Millisecond})
	if !r.IsError || !strings.Contains(r.Text, "concurrency limit reached") {
		t.Fatalf("second run: %s", r.Text)
	}
	cancel()
	if r := <-done; r.Code != v8sandbox.CodeCancelled {
		t.Fatalf("first run: %s %s", r.Code, r.Text)
	}
}

// TestBareExpressionsReturnTheirValue: without a return, the last
// expression statement is the result, in every tier alike.
func TestBareExpressionsReturnTheirValue(t *testing.T) {
	f := newFixture(t, Options{})
	for _, code := range []string{`await everything.get_sum({a: 1, b: 2})`, `everything.get_sum({a: 1, b: 2});`, `__interfaces`} {
		fast := f.ok(t, code)
		slow := f.ok(t, "const unused = 0;\n"+code)
		if fast.Tier == TierV8 || slow.Tier != TierV8 {
			t.Fatalf("tiers %s %s", fast.Tier, slow.Tier)
		}
		if fast.Text != slow.Text || strings.Contains(fast.Text, "returned nothing") {
			t.Fatalf("%q: fast %q, V8 %q", code, fast.Text, slow.Text)
		}
	}
	if r := f.ok(t, `everything.get_sum({a: 1, b: 1})`); r.Text != `The sum of 1 and 1 is 2.` {
		t.Fatalf("bare call: %s", r.Text)
	}
	// Statements without a value still return nothing.
	if r := f.ok(t, `const x = await everything.get_sum({a: 1, b: 2});`); !strings.HasPrefix(r.Text, "null\n(The program returned nothing") {
		t.Fatalf("declaration: %s", r.Text)
	}
}

// TestOneLogLinePerRun: each run writes one INFO line with its tier,
// duration, tool calls and outcome.
func TestOneLogLinePerRun(t *testing.T) {
	var buf bytes.Buffer
	f := newFixture(t, Options{Logger: slog.New(slog.NewTextHandler(&buf, nil))})
	f.ok(t, `const a = await everything.get_sum({a: 1, b: 2}); const b = await everything.add({a: 1, b: 2}); return [a, b]`)
	f.fails(t, `throw new Error("x")`)
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 2 {
		t.Fatalf("log lines:\n%s", buf.String())
	}
	for i, want := range [][]string{
		{"level=INFO", "msg=call_tool_chain", "tier=v8", "duration=", "tool_calls=2", "tools=everything.get-sum,everything.add", "outcome=ok"},
		{"level=INFO", "msg=call_tool_chain", "tool_calls=0", "outcome=EVAL_ERROR"},
	} {
		for _, w := range want {
			if !strings.Contains(lines[i], w) {
				t.Fatalf("line %d lacks %q: %s", i, w, lines[i])
			}
		}
	}
}

// TestLogLineSource: the INFO line is the record slog.Logger.LogAttrs
// would write (same level, message, attributes in order), its source
// logRun in engine.go both when it is looked up (the first line) and when
// it is reused (every later one).
func TestLogLineSource(t *testing.T) {
	var buf bytes.Buffer
	f := newFixture(t, Options{Logger: slog.New(slog.NewJSONHandler(&buf, &slog.HandlerOptions{AddSource: true}))})
	f.ok(t, "const x = 1;\nreturn x")
	f.ok(t, "const x = 2;\nreturn x")
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 2 {
		t.Fatalf("log lines:\n%s", buf.String())
	}
	for _, line := range lines {
		var rec struct {
			Level, Msg string
			Source     struct{ Function, File string }
		}
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatal(err)
		}
		if rec.Level != "INFO" || rec.Msg != "call_tool_chain" || rec.Source.Function != "github.com/isogate/isogate/internal/codemode.(*Engine).logRun" ||
			!strings.HasSuffix(rec.Source.File, "/internal/codemode/engine.go") {
			t.Fatalf("record %+v: %s", rec, line)
		}
		var keys []string
		dec := json.NewDecoder(strings.NewReader(line))
		dec.Token()
		for dec.More() {
			k, _ := dec.Token()
			keys = append(keys, k.(string))
			var skip json.RawMessage
			dec.Decode(&skip)
		}
		if got, want := strings.Join(keys, ","), "time,level,source,msg,tier,duration,tool_calls,unawaited_calls,tools,outcome"; got != want {
			t.Fatalf("keys %s, want %s", got, want)
		}
	}
}

// TestTrivialRunWrapperAllocations bounds what the engine's Go side
// allocates around a trivial tier-3 run (on a runner that answers at once):
// the bridge's host functions are one table for every run, not a table and
// closures built per run, and the run's log line is not built when INFO is
// not logged.
func TestTrivialRunWrapperAllocations(t *testing.T) {
	e, err := New(Options{Runner: instantRunner{}, Catalog: FromCatalog(benchCatalog(10)), Caller: sessionCaller{},
		Output: output.DefaultOptions(), Logger: discardLogger()})
	if err != nil {
		t.Fatal(err)
	}
	req := Request{Code: "const x = 1;\nreturn x"}
	allocs := testing.AllocsPerRun(50, func() {
		if r := e.Execute(context.Background(), req); r.IsError || r.Text != "1" {
			t.Fatalf("%s %s", r.Tier, r.Text)
		}
	})
	if allocs > 30 {
		t.Errorf("a trivial run's wrapper allocates %.0f times; want at most 30", allocs)
	}
}

// hostCallCounter is a runner that counts the host calls of its runs by
// function name.
type hostCallCounter struct {
	v8sandbox.Runner
	mu    sync.Mutex
	calls map[string]int
}

func (c *hostCallCounter) Run(ctx context.Context, job v8sandbox.Job, host v8sandbox.Host) (v8sandbox.Result, error) {
	return c.Runner.Run(ctx, job, v8sandbox.HostFunc(func(ctx context.Context, name string, args json.RawMessage) (json.RawMessage, error) {
		c.mu.Lock()
		c.calls[name]++
		c.mu.Unlock()
		r := host.Call(ctx, v8sandbox.HostCall{Name: name, Args: args})
		return replyError(&r)
	}))
}

func (c *hostCallCounter) count(name string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.calls[name]
}

// TestToolNamesResolvedInThePrelude: with a small catalogue the bridge
// prelude carries each backend's tool names, so a program resolves tools
// (by either name, `in`, unknown names) without a lookup host call (in
// process isolation a round trip to the parent); a catalogue past
// maxPreludeTools is looked up on the host, with the same answers.
func TestToolNamesResolvedInThePrelude(t *testing.T) {
	const code = `const a = await everything.get_sum({a: 2, b: 3});
const b = await everything["get-sum"]({a: 1, b: 1});
return [typeof everything.nope, "add" in everything, "nope" in everything, everything.get_sum === everything["get-sum"], everything.get_sum.name, a, b]`
	const want = `[
  "undefined",
  true,
  false,
  true,
  "get_sum",
  "The sum of 2 and 3 is 5.",
  "The sum of 1 and 1 is 2."
]`
	for _, large := range []bool{false, true} {
		f := newFixture(t, Options{})
		counter := &hostCallCounter{Runner: f.runner, calls: map[string]int{}}
		f.engine.opts.Runner = counter
		if large {
			var tools []*mcp.Tool
			for i := range maxPreludeTools {
				tools = append(tools, &mcp.Tool{Name: fmt.Sprintf("t%d", i), InputSchema: map[string]any{"type": "object"}})
			}
			f.catalog.SetBackend("large", nil, tools)
		}
		// Names that mean something to JavaScript objects are tools like any
		// other, and missing ones stay missing, whoever resolves them.
		f.catalog.SetBackend("hostile", nil, []*mcp.Tool{{Name: "__proto__", InputSchema: map[string]any{"type": "object"}},
			{Name: "constructor", InputSchema: map[string]any{"type": "object"}}})
		r := f.ok(t, code)
		if r.Tier != TierV8 || r.Text != want {
			t.Fatalf("large %v: tier %s, result:\n%s", large, r.Tier, r.Text)
		}
		r = f.ok(t, `return [typeof hostile["__proto__"], typeof hostile.constructor, typeof hostile.toString, typeof hostile.hasOwnProperty, Object.keys(hostile).length]`)
		if r.Text != "[\n  \"function\",\n  \"function\",\n  \"undefined\",\n  \"undefined\",\n  2\n]" {
			t.Fatalf("large %v: hostile names resolve to\n%s", large, r.Text)
		}
		if n := counter.count(fnLookup); (n == 0) == large {
			t.Errorf("large catalogue %v: %d lookup host calls", large, n)
		}
		if n := counter.count(fnCall); n != 2 { // the hostile backend's tools were never called
			t.Errorf("large catalogue %v: %d tool calls, want 2", large, n)
		}
	}
}
