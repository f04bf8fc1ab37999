package programs

import (
	"slices"
	"testing"
)

// TestNames: the programs a code names, by dot, optional chaining and a
// quoted bracket (a version pinned there: name@3, never @0), each once in
// order; a computed name or a word that only
// contains "programs" names none.
func TestNames(t *testing.T) {
	for code, want := range map[string][]string{
		`await programs.a_1({}); await programs . b(); await programs?.c(); programs["d"](); programs.a_1()`: {"a_1", "b", "c", "d"},
		`return await programs["report@3"]({}); programs['x@0']`:                                             {"report@3"},
		`const k = "x"; await programs[k](); myprograms.e(); subprograms["f"]`:                               nil,
		`return 1`: nil,
	} {
		if got := Names(code); !slices.Equal(got, want) {
			t.Errorf("%s: %v, want %v", code, got, want)
		}
	}
}
