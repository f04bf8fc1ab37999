package lexicon

import "testing"

func TestStem(t *testing.T) {
	groups := [][]string{
		{"number", "numbers"},
		{"entry", "entries"},
		{"create", "creates", "created", "creating"},
		{"run", "running"},
		{"stop", "stopped", "stops"},
		{"image", "images"},
		{"match", "matches"},
		{"file", "files"},
		{"list", "lists", "listed", "listing"},
		{"directory", "directories"},
		{"repository", "repositories"},
		{"search", "searches", "searching"},
	}
	for _, g := range groups {
		for _, w := range g[1:] {
			if Stem(w) != Stem(g[0]) {
				t.Errorf("Stem(%q) = %q, Stem(%q) = %q; want equal", w, Stem(w), g[0], Stem(g[0]))
			}
		}
	}
	for _, w := range []string{"string", "status", "sum", "access", "v2", "café", "HTTP"} {
		if got := Stem(w); got != w {
			t.Errorf("Stem(%q) = %q, want unchanged", w, got)
		}
	}
	if Stem("access") != Stem("accesses") {
		t.Errorf("access/accesses differ")
	}
}
