package lexicon

import (
	"slices"
	"testing"
)

// shares reports whether a's concepts meet b's the way search matches
// them: a sense in common, or a sense of one that is a hypernym of the
// other's.
func shares(a, b string) bool {
	ra, rb := Concepts(Stem(a)), Concepts(Stem(b))
	for _, c := range ra.Own {
		if slices.Contains(rb.Own, c) || slices.Contains(rb.Hyper, c) {
			return true
		}
	}
	for _, c := range ra.Hyper {
		if slices.Contains(rb.Own, c) {
			return true
		}
	}
	return false
}

func TestTableLoads(t *testing.T) {
	if err := TableError(); err != nil {
		t.Fatal(err)
	}
	if len(table.entry) < 10000 {
		t.Errorf("table has %d stems, want the WordNet nouns and verbs (tens of thousands)", len(table.entry))
	}
}

// TestConceptsRelateWordsThatMeanTheSame checks pairs WordNet relates
// (synonyms, a word and its hypernym) and pairs it must not.
func TestConceptsRelateWordsThatMeanTheSame(t *testing.T) {
	for _, p := range [][2]string{
		{"create", "make"},      // synonyms (a shared sense)
		{"users", "person"},     // a user is a kind of person
		{"picture", "image"},    // synonyms
		{"delete", "erase"},     // synonyms
		{"directories", "list"}, // a directory is a kind of list
	} {
		if !shares(p[0], p[1]) || !shares(p[1], p[0]) {
			t.Errorf("%s and %s share no concept", p[0], p[1])
		}
	}
	for _, p := range [][2]string{
		{"create", "delete"},
		{"file", "weather"},
		{"number", "channel"},
	} {
		if shares(p[0], p[1]) {
			t.Errorf("%s and %s share a concept", p[0], p[1])
		}
	}
	if r := Concepts(Stem("aachen")); len(r.Own)+len(r.Hyper) != 0 {
		t.Errorf("a proper noun is in the table: %v", r)
	}
}
