package typecheck

import (
	"fmt"
	"sort"
	"strings"
	"testing"
)

// planText renders a plan as "tool@line:loop" sorted (loop "no*3": at
// most three times), plus "dynamic:why@line".
func planText(p *Plan) string {
	var out []string
	for _, c := range p.Calls {
		u := ""
		if c.Unknown {
			u = "?"
		}
		times := ""
		if c.Times > 1 {
			times = fmt.Sprintf("*%d", c.Times)
		}
		out = append(out, fmt.Sprintf("%s%s@%d:%s%s", c.Tool, u, c.Line, c.Loop, times))
	}
	sort.Strings(out)
	for _, d := range p.Dynamic {
		out = append(out, fmt.Sprintf("dynamic:%s@%d", d.Why, d.Line))
	}
	return strings.Join(out, " ")
}

// planCases are programs and the plans the checker finds in them.
var planCases = []struct{ name, program, want string }{
	{"straight line", "await counter.bump({id:'a'});\nreturn await counter.get({id:'a'})", "bump@1:no get@2:no"},
	{"for of", "for (const id of ['a','b']) {\n  await counter.bump({id});\n}", "bump@2:yes"},
	{"for of head runs once", "for (const x of [await counter.get({id:'a'})]) console.log(x)", "get@1:no"},
	{"while", "let i = 0;\nwhile (i++ < 3) await counter.bump({id:'a'})", "bump@2:yes"},
	{"for", "for (let i = 0; i < 3; i++) await counter.bump({id: String(i)})", "bump@1:yes"},
	{"Promise.all over map", "await Promise.all(['a','b'].map((id) => counter.bump({id})))", "bump@1:yes"},
	{"Promise.all over a list", "await Promise.all([counter.bump({id:'a'}), counter.bump({id:'b'})])", "bump@1:no bump@1:no"},
	{"forEach", "['a'].forEach(async (id) => { await counter.bump({id}) })", "bump@1:yes"},
	{"function called once", "async function go(id: string) { return counter.bump({id}) }\nawait go('a')", "bump@1:no"},
	{"function called in a loop", "const go = async (id: string) => counter.bump({id});\nfor (const id of ['a']) await go(id)", "bump@1:yes"},
	{"recursion", "async function go(n: number): Promise<any> { await counter.bump({id:'a'}); if (n > 0) await go(n - 1) }\nawait go(3)", "bump@1:unknown"},
	{"unknown callback", "await new Promise((r) => setTimeout(async () => { await counter.bump({id:'a'}); r(1) }, 1))", "bump@1:unknown"},
	{"then", "await counter.get({id:'a'}).then(() => counter.bump({id:'b'}))", "bump@1:no get@1:no"},
	{"alias", "const c = counter;\nawait c.bump({id:'a'})", "bump@2:no"},
	{"alias typed as the backend", "const c: typeof counter = counter;\nawait c.bump({id:'a'})", "bump@2:no"},
	{"alias typed any", "const a: any = counter;\nawait a.bump({id:'a'})", "dynamic:a backend object used as a value@1"},
	{"alias typed {}", "const o: {} = counter;\nawait (o as any).bump({id:'a'})", "dynamic:a backend object used as a value@1"},
	{"quoted name", "await counter['bump']({id:'a'})", "bump@1:no"},
	{"tool as a value", "const f = counter.bump;\nawait f({id:'a'})", "bump@1:unknown"},
	{"computed name", "const name: string = 'bump';\nawait (counter as any)[name]({id:'a'})", "dynamic:a backend object used as a value@2"},
	{"computed name on the backend", "const name = 'bump' as 'bump' | 'get';\nawait counter[name]({id:'a'})", "dynamic:a computed tool name@2"},
	{"globalThis", "await (globalThis as any)['counter']['bump']({id:'a'})", "dynamic:reaches globals by name@1"},
	{"backend passed around", "const go = async (b: any) => b.bump({id:'a'});\nawait go(counter)", "dynamic:a backend object used as a value@2"},
	{"backend awaited as a value", "console.log(await counter)", "dynamic:a backend object used as a value@1"},
	{"member of an awaited backend", "await (await Promise.resolve(counter)).bump({id:'a'})", "bump@1:no dynamic:a backend object used as a value@1"},
	{"no calls", "return 1 + 1", ""},
	{"undeclared tool", "await counter.wipe({id:'a'})", "wipe?@1:no"},
	// How often a call runs (issue 42): what one approval of the plan covers.
	{"function called from three places", "async function go() { await counter.bump({id:'a'}) }\nawait go(); await go(); await go()", "bump@1:no*3"},
	{"functions calling functions", "const a = async () => counter.bump({id:'a'});\nconst b = async () => { await a(); await a() };\nawait b(); await b(); await b()", "bump@1:no*6"},
	{"function never called", "async function go() { await counter.bump({id:'a'}) }", "bump@1:no"},
	{"default parameter", "async function f(p = counter.bump({id:'a'})) { await p }\nawait f(); await f()", "bump@1:no*2"},
	{"for of head's binding", "for (const {p = counter.bump({id:'a'})} of [{} as any]) await p", "bump@1:yes"},
	{"for in head's target", "const o: any = {};\nfor (o[(await counter.get({id:'a'})).id] in {x: 1, y: 2}) {}", "get@2:yes"},
	{"class field initializer", "class W { p = counter.bump({id:'a'}) }\nawait new W().p", "bump@1:unknown"},
	{"static class field", "class W { static p = counter.bump({id:'a'}) }\nawait W.p", "bump@1:no"},
	{"a thenable's then", "const t = { then(f: () => void) { f(); f() } };\nt.then(() => counter.bump({id:'a'}))", "bump@2:unknown"},
	{"a promise's catch", "await Promise.resolve(1).catch(() => counter.bump({id:'a'}))", "bump@1:no"},
	{"a function named as the wrapper", "async function __isogate_program() { await counter.bump({id:'a'}) }\nfor (let i = 0; i < 3; i++) await __isogate_program()", "bump@1:yes"},
	{"getter", "const o = { get x() { return counter.bump({id:'a'}) } };\nawait o.x", "bump@1:unknown"},
	{"tagged template", "function tag(s: TemplateStringsArray) { return counter.bump({id:'a'}) }\nawait tag`x`", "bump@1:unknown"},
	{"called from a callback and a loop", "const go = async () => counter.bump({id:'a'});\nsetTimeout(() => go(), 1);\nfor (const x of [1]) await go()", "bump@1:yes"},
	{"callback handed to a helper", "async function twice(f: () => Promise<any>) { await f(); await f() }\nawait twice(() => counter.bump({id:'a'}))", "bump@2:unknown"},
}

// The plan names every tool a program may call, where, and whether the
// call may repeat; computed names and backends used as values make it
// partial, said where.
func TestPlan(t *testing.T) {
	for _, tc := range planCases {
		t.Run(tc.name, func(t *testing.T) {
			rep := check(t, tc.program)
			if rep.Plan == nil {
				t.Fatalf("no plan (diagnostics %+v)", rep.Diagnostics)
			}
			if got := planText(rep.Plan); got != tc.want {
				t.Errorf("plan = %q, want %q", got, tc.want)
			}
			if rep.Plan.Partial() != strings.Contains(tc.want, "dynamic") {
				t.Errorf("partial = %v", rep.Plan.Partial())
			}
		})
	}
}

// A backend whose tools are not known yet is `any`: a call to it is not
// in the plan, which says so.
func TestPlanBackendNotReady(t *testing.T) {
	decls := Declarations{ID: "late-1", Text: counterDecls.Text + "declare var late: any;\n"}
	rep, err := testChecker.Check(t.Context(), decls, "await counter.bump({id:'a'});\nawait late.write({x: 1})", false)
	if err != nil {
		t.Fatal(err)
	}
	if got := planText(rep.Plan); got != "bump@1:no dynamic:a backend whose tools are not known yet@2" {
		t.Fatalf("plan = %q", got)
	}
}

// A module's entry point is called once by the host, its other exports
// only by the program; a chain of functions each calling the next twice
// is walked once per function (not once per path: 2^60 here), its bound
// kept at a million.
func TestPlanCountsModulesAndChains(t *testing.T) {
	for _, tc := range []struct{ program, want string }{
		{"export default async function main() { await counter.bump({id:'a'}) }", "bump@1:no"},
		{"export async function main() { await counter.bump({id:'a'}) }\nawait main()", "bump@1:no*2"},
		{"export default async function main() { for (let i = 0; i < 3; i++) await helper() }\nexport async function helper() { await counter.bump({id:'a'}) }", "bump@2:yes"},
		{"export default async function main() { await helper(); await helper() }\nexport async function helper() { await counter.bump({id:'a'}) }", "bump@2:no*2"},
		{"export const main = async () => { await counter.bump({id:'a'}) }", "bump@1:no"},
	} {
		rep, err := testChecker.Check(t.Context(), counterDecls, tc.program, true)
		if err != nil {
			t.Fatal(err)
		}
		if got := planText(rep.Plan); got != tc.want {
			t.Errorf("%q: plan = %q, want %q", tc.program, got, tc.want)
		}
	}
	var b strings.Builder
	b.WriteString("async function f0() { await counter.bump({id:'a'}) }\n")
	for i := 1; i < 60; i++ {
		fmt.Fprintf(&b, "async function f%d() { await f%d(); await f%d() }\n", i, i-1, i-1)
	}
	b.WriteString("await f59()")
	if got := planText(check(t, b.String()).Plan); got != "bump@1:no*1000000" {
		t.Fatalf("plan = %q", got)
	}
}
