package typecheck

import (
	"context"
	"os"
	"strings"
	"testing"
)

// shared is the package's one checker: loading the compiler once per
// package keeps the tests fast.
var testChecker *Checker

func TestMain(m *testing.M) {
	testChecker = New(Options{Timeout: 60e9}) // generous: a slow machine must not turn a check into "unchecked"
	code := m.Run()
	testChecker.Close()
	os.Exit(code)
}

var counterDecls = Declarations{ID: "counter-1", Text: `
interface CounterBumpInput { id: string; by?: number }
interface IsogateBackend_counter {
  bump(args: CounterBumpInput): Promise<any>;
  get(args: { id: string }): Promise<{ value: number }>;
}
declare var counter: IsogateBackend_counter;
`}

func check(t *testing.T, program string) *Report {
	t.Helper()
	rep, err := testChecker.Check(context.Background(), counterDecls, program, false)
	if err != nil {
		t.Fatalf("check: %v", err)
	}
	return rep
}

// certainCases are programs with one certain mistake each.
var certainCases = []struct {
	name, program, kind, hint string
	line, column              int
}{
	{"unknown parameter", "await counter.bump({id:'p1'});\nawait counter.bump({ident:'p3'});", "unknown_parameter",
		"`ident` is not a parameter of counter.bump; did you mean `id`?", 2, 21},
	{"unknown tool", "await counter.bump({id:'r1'}); await counter.bumpp({id:'r2'})", "unknown_tool",
		"`bumpp` is not a tool of counter; did you mean `counter.bump`?", 1, 46},
	{"missing parameter", "await counter.bump({by: 2})", "missing_parameter", "counter.bump requires the parameter `id`", 1, 20},
	{"wrong literal type", "await counter.bump({id: 'a', by: '2'})", "wrong_type", "the value of `by` has the wrong type for counter.bump", 1, 30},
	{"no arguments", "await counter.bump()", "missing_arguments", "counter.bump requires arguments", 1, 15},
	{"misspelt backend", "await counter.bump({id: 'a'});\nreturn await countr.bump({id: 'b'})", "unknown_backend",
		"`countr` is not defined: no backend has that name; did you mean `counter`?", 2, 14},
}

func TestCertainMistakes(t *testing.T) {
	for _, tc := range certainCases {
		t.Run(tc.name, func(t *testing.T) {
			rep := check(t, tc.program)
			certain := rep.Certain()
			if len(certain) != 1 {
				t.Fatalf("certain = %+v, want one (all: %+v)", certain, rep.Diagnostics)
			}
			d := certain[0]
			if d.Kind != tc.kind || !strings.Contains(d.Hint(), tc.hint) || d.Line != tc.line || d.Column != tc.column {
				t.Errorf("got %s at %d:%d: %q; want %s at %d:%d containing %q", d.Kind, d.Line, d.Column, d.Hint(), tc.kind, tc.line, tc.column, tc.hint)
			}
		})
	}
}

// validPrograms are valid dynamic code the checker must not flag.
var validPrograms = []string{
	"const r = await counter.bump({id: 'a'}); return r.content[0].text.length",
	"const name = 'bump'; return await (counter as any)[name]({id: 'x'})",
	"const ids = ['a','b']; for (const id of ids) await counter.bump({id, by: 1}); return ids.length",
	"const v = await counter.get({id: 'a'}); console.log(v.value + 1); return v",
	"let x: any = JSON.parse('{}'); await counter.bump(x); return [1,2].at(-1)",
	"const o = {id: 'a'}; await counter.bump(o)",
	"return await Promise.all([counter.bump({id:'a'}), counter.bump({id:'b'})])",
}

func TestValidDynamicCodeIsClean(t *testing.T) {
	for _, p := range validPrograms {
		rep := check(t, p)
		if len(rep.Diagnostics) != 0 {
			t.Errorf("%q: %+v", p, rep.Diagnostics)
		}
	}
}

// TestUndeclaredNamesNotLikeABackend: an undeclared name is certain only
// as the object of a call and spelt like a backend; elsewhere, or far from
// every backend's name, it stays the compiler's hint.
func TestUndeclaredNamesNotLikeABackend(t *testing.T) {
	for _, p := range []string{
		"return await zzzzzz.bump({id: 'a'})",
		"return countr + 1",
		"return countr.bump",
	} {
		rep := check(t, p)
		if len(rep.Diagnostics) == 0 || len(rep.Certain()) != 0 {
			t.Errorf("%q: diagnostics %+v, want hints only", p, rep.Diagnostics)
		}
	}
}
