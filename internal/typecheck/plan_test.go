package typecheck

import (
	"fmt"
	"sort"
	"strings"
	"testing"
)

// planText renders a plan as "tool@line:loop" sorted, plus "dynamic:why@line".
func planText(p *Plan) string {
	var out []string
	for _, c := range p.Calls {
		u := ""
		if c.Unknown {
			u = "?"
		}
		out = append(out, fmt.Sprintf("%s%s@%d:%s", c.Tool, u, c.Line, c.Loop))
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
