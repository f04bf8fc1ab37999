package typecheck

import (
	"encoding/json"
	"testing"
)

// narrowingPrograms are programs whose names may come to hold a backend
// only through narrowing, aliasing or inference: the places where
// skipping a name whose type cannot be a backend's would go wrong.
var narrowingPrograms = []string{
	"const o: {} = counter;\nawait (o as any).bump({id: 'a'});\nif (typeof o === 'object') console.log(o)",
	"const isC = (x: unknown): x is typeof counter => true;\nconst o: {} = {};\nif (isC(o)) await o.bump({id: 'a'})",
	"const isC = (x: any): x is typeof counter => true;\nconst o: object = {};\nif (isC(o)) await o.get({id: 'a'})",
	"const isC = (x: unknown): x is typeof counter => true;\nconst o = {id: 'x'};\nif (isC(o)) await o.bump({id: 'a'})",
	"const pick = (x: typeof counter | number) => typeof x === 'object';\nconst o: {} = counter;\nif (pick(o as any)) await (o as typeof counter).bump({id: 'a'})",
	"function assertC(x: unknown): asserts x is typeof counter {}\nconst o: {} = {};\nassertC(o);\nawait o.bump({id: 'a'})",
	"let u: string | typeof counter = 'a';\nu = counter;\nawait u.bump({id: 'a'})",
	"let a: any = counter;\nawait a.bump({id: 'a'})",
	"let k: unknown = counter;\nif (k) await (k as typeof counter).get({id: 'a'})",
	"class C { constructor(public b = counter) {} }\nconst c = new C();\nawait c.b.bump({id: 'a'})",
	"const { bump } = counter;\nawait bump({id: 'a'})",
	"const list = [counter];\nfor (const b of list) await b.bump({id: 'a'})",
	"const m = new Map([['c', counter]]);\nawait m.get('c')!.bump({id: 'a'})",
	"function f<T>(x: T): T { return x }\nawait f(counter).bump({id: 'a'})",
	"const counterAlias = counter, n = 1;\nawait counterAlias.get({id: String(n)})",
	"const C2 = class { b = counter };\nawait new C2().b.get({id: 'a'})",
	"let x = 1;\n{ const x = counter; await x.bump({id: 'a'}) }\nconsole.log(x)",
	"const x = 1;\nasync function g() { const x = counter; await x.bump({id: 'a'}) }\nawait g(); console.log(x)",
	"const o = {}; const p = Object.assign(o, counter);\nawait p.bump({id: 'a'})",
	"const w = [counter, 1] as const;\nawait w[0].bump({id: 'a'})",
	"try { await counter.bump({id: 'a'}) } catch (e) { await (e as typeof counter).get({id: 'b'}) }",
	"enum E { A }\nconst e = E.A;\nif (e === E.A) await counter.bump({id: 'a'})",
	"const o: Record<string, any> = {c: counter};\nawait o.c.bump({id: 'a'})",
	"const r: { x?: typeof counter } = {x: counter};\nif (r.x) await r.x.bump({id: 'a'})",
	"const o = {} as object;\nif ('bump' in o) console.log(o);\nif (o instanceof Object) console.log(o)",
	// Names of globals that cannot hold a backend, declared again by the
	// program as ones that do.
	"const console = counter;\nawait console.bump({id: 'a'})",
	"const go = async (JSON: typeof counter) => JSON.get({id: 'a'});\nawait go(counter)",
	"function Math() { return counter }\nawait Math().bump({id: 'a'})",
}

// The plan asks the checker for the type of a name only when the name may
// hold a backend: the plan that skips the others is the plan that asks
// for every name, over every program of the package's tests, the
// benchmark's, and programs that reach a backend through narrowing,
// guards, aliases and inference.
func TestPlanSkipsOnlyNamesThatCannotHoldABackend(t *testing.T) {
	ctx := t.Context()
	type entry struct {
		decls   Declarations
		program string
		module  bool
	}
	var corpus []entry
	for _, e := range sharingCorpus() {
		corpus = append(corpus, entry{counterDecls, e.program, e.module})
	}
	for _, p := range narrowingPrograms {
		corpus = append(corpus, entry{counterDecls, p, false})
	}
	corpus = append(corpus, entry{BenchDeclarations(), BenchProgram(), false})
	late := Declarations{ID: "late-plan-1", Text: counterDecls.Text + "declare var late: any;\n"}
	for _, p := range []string{
		"await counter.bump({id:'a'});\nawait late.write({x: 1})",
		"const l = late;\nawait l.write({x: 1});\nconst { late: again } = globalThis as any;\nawait again.write({})",
	} {
		corpus = append(corpus, entry{late, p, false})
	}
	for _, e := range corpus {
		for _, fresh := range []bool{false, true} {
			got, err := testChecker.checkWith(ctx, e.decls, e.program, e.module, checkMode{Fresh: fresh})
			if err != nil {
				t.Fatalf("%q: %v", e.program, err)
			}
			want, err := testChecker.checkWith(ctx, e.decls, e.program, e.module, checkMode{Fresh: fresh, ExhaustivePlan: true})
			if err != nil {
				t.Fatalf("%q exhaustive: %v", e.program, err)
			}
			g, _ := json.Marshal(got.Plan)
			w, _ := json.Marshal(want.Plan)
			if string(g) != string(w) {
				t.Errorf("%q (fresh %v):\n got %s\nwant %s", e.program, fresh, g, w)
			}
		}
	}
}

// The plan of the benchmark's program asks for the types of its backend
// references (and of the one type it names, and of the results of calls
// whose members it takes, which the checker has resolved already), not of
// every name: the other names' declared types cannot be narrowed to a
// backend's. Asking for every name is 145 queries; skipping, 27.
func TestPlanAsksOnlyAboutNamesThatMayHoldABackend(t *testing.T) {
	decls, prog := BenchDeclarations(), BenchProgram()
	for _, fresh := range []bool{false, true} {
		rep, err := testChecker.checkWith(t.Context(), decls, prog, false, checkMode{Fresh: fresh})
		if err != nil {
			t.Fatal(err)
		}
		all, err := testChecker.checkWith(t.Context(), decls, prog, false, checkMode{Fresh: fresh, ExhaustivePlan: true})
		if err != nil {
			t.Fatal(err)
		}
		if got, exhaustive := rep.Plan.typeQueries, all.Plan.typeQueries; got*4 > exhaustive {
			t.Errorf("fresh %v: the plan asked for %d types (%d exhaustively) for %d calls", fresh, got, exhaustive, len(rep.Plan.Calls))
		}
	}
}
