package gateway

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/isogate/isogate/config"
	"github.com/isogate/isogate/internal/app"
	"github.com/isogate/isogate/internal/backend"
	"github.com/isogate/isogate/internal/pipeline"
	"github.com/isogate/isogate/internal/resultstore/redistest"
	"github.com/isogate/isogate/internal/typecheck"
	"github.com/isogate/isogate/v8sandbox"
)

// planLoopCases are programs that call store.write (under approval)
// more often than a reading of their shape suggests. loop is what the
// plan must say of store.write, calls the bound it must announce when
// loop is "no"; made is how many writes the program makes when every
// call is allowed.
var planLoopCases = []struct {
	name, program string
	loop          string
	calls, made   int
}{
	// Array methods' callbacks: a loop.
	{name: "Array.from with a callback", loop: "yes", made: 3,
		program: "await Promise.all(Array.from(['a', 'b', 'c'], (id) => store.write({id})))"},
	{name: "Array.from length", loop: "yes", made: 3,
		program: "await Promise.all(Array.from({length: 3}, (_, i) => store.write({id: 'w' + i})))"},
	{name: "reduce", loop: "yes", made: 3,
		program: "await ['a', 'b', 'c'].reduce(async (p: Promise<any>, id) => { await p; await store.write({id}) }, Promise.resolve())"},
	{name: "sort comparator", loop: "yes", made: 3,
		program: "const ps: Promise<any>[] = [];\n['c', 'a', 'b'].sort((x, y) => { if (ps.length < 3) ps.push(store.write({id: x + y})); return x < y ? -1 : 1 });\nawait Promise.all(ps)"},
	{name: "filter", loop: "yes", made: 3,
		program: "const ps: Promise<any>[] = [];\n['a', 'b', 'c'].filter((id) => ps.push(store.write({id})) > 0);\nawait Promise.all(ps)"},
	{name: "flatMap", loop: "yes", made: 3,
		program: "await Promise.all(['a', 'b', 'c'].flatMap((id) => [store.write({id})]))"},
	{name: "Promise.all over map", loop: "yes", made: 3,
		program: "await Promise.all(['a', 'b', 'c'].map((id) => store.write({id})))"},
	{name: "forEach calling a helper", loop: "yes", made: 3,
		program: "async function helper(id: string) { await store.write({id}) }\nconst ps: Promise<any>[] = [];\n['a', 'b', 'c'].forEach((id) => { ps.push(helper(id)) });\nawait Promise.all(ps)"},
	{name: "helper handed to map", loop: "unknown", made: 3,
		program: "async function helper(id: string) { await store.write({id}) }\nawait Promise.all(['a', 'b', 'c'].map(helper))"},
	// Statements that repeat.
	{name: "labelled for", loop: "yes", made: 3,
		program: "outer: for (const id of ['a', 'b', 'c']) { await store.write({id}); continue outer }"},
	{name: "do while", loop: "yes", made: 3,
		program: "let i = 0;\ndo { await store.write({id: 'd' + i}) } while (++i < 3)"},
	{name: "try finally in a loop", loop: "yes", made: 3,
		program: "for (let i = 0; i < 3; i++) { try { if (i < 0) throw new Error('x') } finally { await store.write({id: 'f' + i}) } }"},
	{name: "for await over a generator", loop: "yes", made: 3,
		program: "async function* gen() { yield 'a'; yield 'b'; yield 'c' }\nfor await (const id of gen()) await store.write({id})"},
	{name: "for of head's destructuring default", loop: "yes", made: 3,
		program: "for (const {p = store.write({id: 'd'})} of [{} as any, {}, {}]) await p"},
	// Callbacks handed to other code, getters, hooks: unknown.
	{name: "callback handed to a helper", loop: "unknown", made: 3,
		program: "async function thrice(f: () => Promise<any>) { await f(); await f(); await f() }\nawait thrice(() => store.write({id: 't'}))"},
	{name: "recursion", loop: "unknown", made: 3,
		program: "async function go(n: number): Promise<any> { await store.write({id: 'r' + n}); if (n > 1) await go(n - 1) }\nawait go(3)"},
	{name: "then chain re-entry", loop: "unknown", made: 3,
		program: "let n = 0;\nconst step = (): Promise<any> => store.write({id: 's' + n}).then(() => (++n < 3 ? step() : 0));\nawait step()"},
	{name: "getter by defineProperty", loop: "unknown", made: 3,
		program: "const o: any = {};\nObject.defineProperty(o, 'x', {get() { return store.write({id: 'g'}) }});\nfor (let i = 0; i < 3; i++) await o.x"},
	{name: "getter of an object literal", loop: "unknown", made: 3,
		program: "const o = { get x() { return store.write({id: 'g'}) } };\nawait o.x; await o.x; await o.x"},
	{name: "Proxy trap", loop: "unknown", made: 3,
		program: "const p: any = new Proxy({}, { get: (_t, k) => store.write({id: String(k)}) });\nawait p.a; await p.b; await p.c"},
	{name: "JSON.parse reviver", loop: "unknown", made: 3,
		program: "const ps: Promise<any>[] = [];\nJSON.parse('[1,2]', (k, v) => { ps.push(store.write({id: 'j' + k})); return v });\nawait Promise.all(ps)"},
	{name: "replace with a function", loop: "unknown", made: 3,
		program: "const ps: Promise<any>[] = [];\n'abc'.replace(/./g, (c) => { ps.push(store.write({id: c})); return c });\nawait Promise.all(ps)"},
	{name: "toString hook", loop: "unknown", made: 3,
		program: "const ps: Promise<any>[] = [];\nconst o = { toString() { ps.push(store.write({id: 's'})); return 'x' } };\n[o, o, o].join();\nawait Promise.all(ps)"},
	{name: "valueOf hook", loop: "unknown", made: 3,
		program: "const ps: Promise<any>[] = [];\nconst o: any = { valueOf() { ps.push(store.write({id: 'v'})); return 1 } };\nconst sum = o + o + o;\nawait Promise.all(ps)"},
	{name: "tagged template", loop: "unknown", made: 3,
		program: "function tag(s: TemplateStringsArray) { return store.write({id: s[0]}) }\nfor (let i = 0; i < 3; i++) await tag`t`"},
	{name: "class field initializer", loop: "unknown", made: 3,
		program: "class W { p = store.write({id: 'c'}) }\nfor (let i = 0; i < 3; i++) await new W().p"},
	{name: "a thenable's then", loop: "unknown", made: 3,
		program: "const ps: Promise<any>[] = [];\nconst t = { then(f: (v: number) => void) { f(1); f(2); f(3) } };\nt.then(() => { ps.push(store.write({id: 't'})) });\nawait Promise.all(ps)"},
	{name: "a function named as the wrapper", loop: "yes", made: 3,
		program: "async function __isogate_program() { await store.write({id: 'u'}) }\nfor (let i = 0; i < 3; i++) await __isogate_program()"},
	{name: "an exported helper called in a loop", loop: "yes", made: 3,
		program: "export default async function main() { for (let i = 0; i < 3; i++) await helper('m' + i) }\nexport async function helper(id: string) { await store.write({id}) }"},
	// Counted: each call of a function runs its calls again.
	{name: "function called three times", loop: "no", calls: 3, made: 3,
		program: "async function go(id: string) { await store.write({id}) }\nawait go('a'); await go('b'); await go('c')"},
	{name: "default parameter", loop: "no", calls: 3, made: 3,
		program: "async function f(p = store.write({id: 'd'})) { await p }\nawait f(); await f(); await f()"},
	{name: "generator body", loop: "no", calls: 3, made: 3,
		program: "function* g() { yield store.write({id: 'a'}); yield store.write({id: 'b'}); yield store.write({id: 'c'}) }\nfor (const p of g()) await p"},
	// What no reading of the program's shape sees: the run's count is the
	// backstop.
	{name: "patched Promise.prototype.then", loop: "no", calls: 1, made: 3,
		program: "const ps: Promise<any>[] = [];\nconst orig = Promise.prototype.then;\n(Promise.prototype as any).then = function (this: any, f: any, r: any) { if (typeof f === 'function') { f(); f() } return orig.call(this, f, r) };\nPromise.resolve(0).then(() => { ps.push(store.write({id: 'p'})) });\nPromise.prototype.then = orig;\nawait null; await null;\nawait Promise.all(ps)"},
	{name: "eval in a loop", loop: "no", calls: 1, made: 4,
		program: "await store.write({id: 's'});\nfor (let i = 0; i < 3; i++) await eval(\"store.write({id: 'e' + i})\")"},
	{name: "computed name via an alias", loop: "no", calls: 1, made: 4,
		program: "await store.write({id: 's'});\nconst k = ['wri', 'te'].join('');\nconst s: any = store;\nfor (let i = 0; i < 3; i++) await s[k]({id: 'c' + i})"},
}

// planPrompts is a client's elicitation handler that accepts every plan
// approval and declines every approval of a single call, counting both.
type planPrompts struct {
	mu          sync.Mutex
	plans, call int
}

func (p *planPrompts) handler(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if req.Params.Meta["isogate/plan_approval"] != nil {
		p.plans++
		return &mcp.ElicitResult{Action: "accept"}, nil
	}
	p.call++
	return &mcp.ElicitResult{Action: "decline"}, nil
}

func (p *planPrompts) counts() (plans, call int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.plans, p.call
}

// An approved plan covers the calls it announced and no more: over real
// HTTP, with the person accepting each plan and declining every call
// asked on its own, a program never makes more calls to a tool under
// approval than its approved plan said ("in a loop: no; at most N
// calls"), whatever makes it repeat them: array methods' callbacks, getters,
// hooks, callbacks handed to other code, patched built-ins, eval. Where
// the shape of the program shows the repetition, the plan says so and
// the calls run; where it does not, the calls past the plan are asked
// again (and here declined). A function called from three places is
// three calls, and runs without a further question.
func TestPlanApprovalCoversOnlyThePlannedCalls(t *testing.T) {
	cfg := config.Default()
	cfg.Server.CacheDir = t.TempDir()
	cfg.Sandbox.Isolation = config.IsolationThread
	cfg.Sandbox.TrustedCode = true
	cfg.Sandbox.Typecheck = "warn"
	cfg.Sandbox.TypecheckTimeout = time.Minute // a loaded machine must not turn a check into "unchecked"
	cfg.Sandbox.PlanApproval = true
	store := &storeBackend{}
	_, base := serveHealthy(t, cfg, app.Options{Runner: testPool(), ExtraSpecs: []backend.Spec{store.spec()}})
	if err := typecheck.Shared().Warm(t.Context()); err != nil {
		t.Fatal(err)
	}
	prompts := &planPrompts{}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "agent"}, &mcp.ClientOptions{ElicitationHandler: prompts.handler}).
		Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: base + "/mcp", HTTPClient: http.DefaultClient}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })

	for _, tc := range planLoopCases {
		t.Run(tc.name, func(t *testing.T) {
			before := len(store.got())
			plans0, call0 := prompts.counts()
			text, isErr, res := callText(t, cs, "call_tool_chain", map[string]any{"code": tc.program})
			writes := 0
			for _, c := range store.got()[before:] {
				if strings.HasPrefix(c, "write:") {
					writes++
				}
			}
			plans, call := prompts.counts()
			plans, call = plans-plans0, call-call0
			rec := runRecord(t, cs, res)
			var write *pipeline.PlanTool
			if rec.Plan != nil {
				for i := range rec.Plan.Tools {
					if rec.Plan.Tools[i].Name() == "store.write" {
						write = &rec.Plan.Tools[i]
					}
				}
			}
			if write == nil || plans != 1 {
				t.Fatalf("plan %+v, %d plan approvals; want store.write in it, approved once (error %v: %s)", rec.Plan, plans, isErr, text)
			}
			// The guard: never more calls than the approved plan covers.
			if bound := write.Covers(); bound >= 0 && writes > bound {
				t.Errorf("the approved plan said store.write %s (lines %v; in a loop: %s); the backend received %d writes, %d asked on their own",
					fmt.Sprintf("at most %d times", bound), write.Lines, write.Loop, writes, call)
			}
			if write.Loop != tc.loop {
				t.Errorf("plan says store.write in a loop: %s, want %s", write.Loop, tc.loop)
			}
			if bound := write.Covers(); tc.loop == "no" && bound != tc.calls {
				t.Errorf("plan bounds store.write to %d calls, want %d", bound, tc.calls)
			}
			// The attack is real: the program made its calls, or those past
			// the plan were asked on their own and declined.
			switch {
			case write.Loop != "no" || tc.made <= tc.calls:
				if isErr || writes != tc.made || call != 0 {
					t.Errorf("want %d writes and no call asked on its own; got %d writes, %d asked (error %v: %s)", tc.made, writes, call, isErr, text)
				}
			default:
				if !isErr || !strings.Contains(text, "APPROVAL_DENIED") || call == 0 {
					t.Errorf("want the calls past the plan asked and declined (APPROVAL_DENIED); got %d writes, %d asked (error %v: %s)", writes, call, isErr, text)
				}
			}
		})
	}
}

// planReplica is durableReplica with programs type-checked (warn) and
// plans approved once (sandbox.plan_approval).
func planReplica(t *testing.T, redisURL string, counter *countingBackend) string {
	t.Helper()
	cfg := config.Default()
	cfg.Server.CacheDir = t.TempDir()
	cfg.Server.Stateless = true
	cfg.Store.RedisURL = redisURL
	cfg.Store.HMACKey = "durable-test-hmac-key-0123456789"
	cfg.Sandbox.Isolation = config.IsolationThread // checked in the process's shared checker, warmed below
	cfg.Sandbox.TrustedCode = true
	cfg.Sandbox.Typecheck = "warn"
	cfg.Sandbox.TypecheckTimeout = time.Minute
	cfg.Sandbox.PlanApproval = true
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	pool := v8sandbox.NewPool(v8sandbox.Options{Workers: 2})
	t.Cleanup(func() { go pool.Close() })
	g := startHealthy(t, cfg, app.Options{Runner: pool, ExtraSpecs: []backend.Spec{backend.InMemory("counter", counter.server)}})
	g.app.Policy.Replace(pipeline.NewPolicy(map[string]config.Backend{"counter": {Tools: config.ToolPolicy{Approve: []string{"pay"}}}}))
	srv := httptest.NewServer(g.HTTPHandler())
	t.Cleanup(srv.Close)
	return srv.URL + "/mcp"
}

// answerRound answers every input request of res: plan approvals with
// accept, approvals of single calls with action; it returns how many of
// each it answered.
func answerRound(res *mcp.CallToolResult, action string) (mcp.InputResponseMap, int, int) {
	out := mcp.InputResponseMap{}
	plans, calls := 0, 0
	for id, req := range res.InputRequests {
		el, _ := req.(*mcp.ElicitParams)
		if el != nil && el.Meta["isogate/plan_approval"] != nil {
			plans++
			out[id] = &mcp.ElicitResult{Action: "accept"}
		} else {
			calls++
			out[id] = &mcp.ElicitResult{Action: action}
		}
	}
	return out, plans, calls
}

// A durable run resumed by replay on another replica keeps its plan's
// count: the calls replayed from the journal used the approval of the
// plan as they did when first made. Two stateless replicas on a real
// redis-server: on A the person accepts the plan (counter.pay at most
// once); pay runs, then a second pay through eval, past the plan, asks on
// its own and the run pauses. The person declines it, and the retry
// reaches B, which replays the run (its plan asked again, accepted): the
// declined pay must not ride on the plan's approval there.
func TestPlanApprovalCountHoldsAcrossReplay(t *testing.T) {
	srv := redistest.ForTest(t)
	counter := newCountingBackend()
	urlA, urlB := planReplica(t, srv.URL(), counter), planReplica(t, srv.URL(), counter)
	if err := typecheck.Shared().Warm(t.Context()); err != nil {
		t.Fatal(err)
	}
	a, b := roundTripClient(t, urlA), roundTripClient(t, urlB)
	const program = "await counter.pay({amount: 1});\nawait eval(\"counter.pay({amount: 2})\");\nreturn 'paid twice'"
	call := func(cs *mcp.ClientSession, responses mcp.InputResponseMap, state string) *mcp.CallToolResult {
		t.Helper()
		res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "call_tool_chain", Arguments: map[string]any{"code": program},
			InputResponses: responses, RequestState: state})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	res := call(a, nil, "")
	answers, plans, calls := answerRound(res, "decline")
	if plans != 1 || calls != 0 {
		t.Fatalf("first round: %d plan approvals, %d call approvals; want the plan (%+v)", plans, calls, res)
	}
	res = call(a, answers, res.RequestState)
	answers, plans, calls = answerRound(res, "decline")
	if plans != 0 || calls != 1 || !strings.HasPrefix(res.RequestState, "durable-") || counter.count() != 1 {
		t.Fatalf("second round: %d plan approvals, %d call approvals, state %q, %d pays; want the second pay asked, durable, after one pay",
			plans, calls, res.RequestState, counter.count())
	}
	// The retry declining the second pay reaches B, which replays the run.
	for round := 0; ; round++ {
		res = call(b, answers, res.RequestState)
		if len(res.InputRequests) == 0 {
			break
		}
		if round == 5 {
			t.Fatalf("B keeps asking: %+v", res.InputRequests)
		}
		answers, _, _ = answerRound(res, "decline")
	}
	text := res.Content[0].(*mcp.TextContent).Text
	if n := counter.count(); n != 1 || !res.IsError || !strings.Contains(text, "APPROVAL_DENIED") {
		t.Fatalf("after the replay on B: %d pays (want 1: the second was declined), error %v: %s", n, res.IsError, text)
	}
}

// An approved plan's count belongs to its run: alice and bob, over HTTP
// at once, each run the same programs four times, each plan approved by
// their own person. A program whose plan says store.write at most once
// and that writes four times through eval writes once per run (the rest
// asked and declined); a function called from three places writes three
// times per run, asking nothing more: no run's count is used by another,
// nor another principal's.
func TestPlanApprovalCountIsPerRun(t *testing.T) {
	store := &storeBackend{}
	h := redteamGateway(t, func(c *config.Config) {
		c.Sandbox.TrustedCode = true
		c.Sandbox.Typecheck = "warn"
		c.Sandbox.TypecheckTimeout = time.Minute
		c.Sandbox.PlanApproval = true
	}, store.spec())
	if err := typecheck.Shared().Warm(t.Context()); err != nil {
		t.Fatal(err)
	}
	const pastPlan = "await store.write({id: 'once'});\nfor (let i = 0; i < 3; i++) await eval(\"store.write({id: 'e' + i})\")"
	const threeCalls = "async function go(id: string) { await store.write({id}) }\nawait go('a'); await go('b'); await go('c')"
	var wg sync.WaitGroup
	errs := make(chan string, 32)
	for _, name := range []string{"alice", "bob"} {
		prompts := &planPrompts{}
		cs := h.connectAsWith(t, name, "", &mcp.ClientOptions{ElicitationHandler: prompts.handler})
		for i := range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "call_tool_chain", Arguments: map[string]any{"code": pastPlan}})
				if err != nil || !res.IsError || !strings.Contains(res.Content[0].(*mcp.TextContent).Text, "APPROVAL_DENIED") {
					errs <- fmt.Sprintf("%s's run %d past its plan: %v %+v", name, i, err, res)
				}
				res, err = cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "call_tool_chain", Arguments: map[string]any{"code": threeCalls}})
				if err != nil || res.IsError {
					errs <- fmt.Sprintf("%s's run %d of three calls: %v %+v", name, i, err, res)
				}
			}()
		}
		t.Cleanup(func() {
			if plans, call := prompts.counts(); plans != 8 || call != 4 {
				t.Errorf("%s was asked %d plans and %d calls; want 8 and 4 (one call past each plan of eval, declined)", name, plans, call)
			}
		})
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
	count := map[string]int{}
	for _, c := range store.got() {
		count[c]++
	}
	// Per principal and run: 1 write past-plan program, 3 of the other.
	if count["write:once"] != 8 || count["write:e0"] != 0 || count["write:a"] != 8 || count["write:c"] != 8 || len(store.got()) != 32 {
		t.Fatalf("the backend received %v", count)
	}
}
