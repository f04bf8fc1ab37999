package typecheck

import (
	"encoding/json"
	"testing"
)

// sharingCorpus is every program of this package's tests, and programs
// that exercise what sharing one program between checks could change:
// literal unions (printed in the order their types were made), global
// types the libraries lack, module programs, and programs a check must
// not share (imports, global augmentations, scripts).
func sharingCorpus() []struct {
	program string
	module  bool
} {
	type entry = struct {
		program string
		module  bool
	}
	var out []entry
	for _, tc := range certainCases {
		out = append(out, entry{tc.program, false})
	}
	for _, p := range validPrograms {
		out = append(out, entry{p, false})
	}
	for _, tc := range planCases {
		out = append(out, entry{tc.program, false})
	}
	for _, p := range []string{
		"const k: 'b' | 'a' = 'c'; const n: 'z' | 'y' | 'x' = k; return n",
		"const x = Math.random() > 0.5 ? 'a' : 1; const y: boolean = x;",
		"using d = { [Symbol.dispose]() {} };",
		"await using d = null; await counter.bump({id: 'a'})",
		"await using d = null;", // only global diagnostics, which a shared checker reports once
		"await using d = null;",
		"await counter.bump({id: 'a', by: 'x' as unknown as number, extra: 1})",
		"const r = await counter.get({id: 'a'}); const s: string = r.value; return s",
		"for await (const x of [counter.get({id: 'a'})]) console.log(x.value)",
		"const { value } = await counter.get({id: 1}); return value.toFixed(2)",
		"await counter.bump({id: 'a'}",
	} {
		out = append(out, entry{p, false})
	}
	for _, p := range []string{
		"export default async function main() { return await counter.get({id: 'a'}) }",
		"export async function main() { await counter.bumpp({id: 'a'}) }",
		"import { x } from 'somewhere'; export async function main() { return x }",
		"declare global { var extra: number }\nexport async function main() { return extra + 1 }",
		"async function main() { return await counter.get({id: 'a'}) }",
		"export async function main() { const m = await import('fs'); return m }",
	} {
		out = append(out, entry{p, true})
	}
	return out
}

// Checking programs one after another in the shared program of their
// declarations says what checking each in a program of its own says: the
// same diagnostics (codes, messages, positions, certain or hint, hints)
// and the same plan, whatever was checked before.
func TestSharedCheckMatchesFresh(t *testing.T) {
	ctx := t.Context()
	corpus := sharingCorpus()
	shared := 0
	for _, e := range corpus {
		got, err := testChecker.check(ctx, counterDecls, e.program, e.module, false)
		if err != nil {
			t.Fatalf("%q: %v", e.program, err)
		}
		want, err := testChecker.check(ctx, counterDecls, e.program, e.module, true)
		if err != nil {
			t.Fatalf("%q fresh: %v", e.program, err)
		}
		if want.shared {
			t.Fatalf("%q: a fresh check ran in the shared program", e.program)
		}
		if got.shared {
			shared++
		}
		got.Duration, want.Duration = 0, 0
		g, _ := json.Marshal(got)
		w, _ := json.Marshal(want)
		if string(g) != string(w) {
			t.Errorf("%q (shared %v):\n got %s\nwant %s", e.program, got.shared, g, w)
		}
	}
	if shared < len(corpus)/3 {
		t.Errorf("only %d of %d checks ran in the shared program", shared, len(corpus))
	}
}

// A clean program is checked in the shared program of its declarations;
// one the compiler finds anything in, one that names other modules,
// declares global or ambient ones or is a script of its own is checked in
// a program of its own.
func TestWhatIsNotShared(t *testing.T) {
	ctx := t.Context()
	for _, tc := range []struct {
		program        string
		module, shared bool
	}{
		{"return await counter.get({id: 'a'})", false, true},
		{"export async function main() { return 1 }", true, true},
		{"await counter.bump({ident: 'a'})", false, false},
		{"return 1 +", false, false},
		{"import { x } from 'y'; export async function main() { return x }", true, false},
		{"export async function main() { return import('y') }", true, false},
		{"declare global { var extra: number }\nexport async function main() { return extra }", true, false},
		{"declare module 'y' { export const x: number }\nexport async function main() { return 1 }", true, false},
		{"async function main() { return 1 }", true, false},
		{"export { x } from 'y';", true, false},
	} {
		rep, err := testChecker.Check(ctx, counterDecls, tc.program, tc.module)
		if err != nil {
			t.Fatalf("%q: %v", tc.program, err)
		}
		if rep.shared != tc.shared {
			t.Errorf("%q: shared = %v, want %v", tc.program, rep.shared, tc.shared)
		}
	}
}
