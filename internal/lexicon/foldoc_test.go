package lexicon

import (
	"slices"
	"testing"
)

// near reports whether the FOLDOC table relates a and b, both ways.
func near(a, b string) bool {
	sa, sb := Stem(a), Stem(b)
	return slices.Contains(Near(sa), sb) && slices.Contains(Near(sb), sa)
}

// TestNearRelatesComputingSynonyms checks pairs FOLDOC gives one entry
// and WordNet does not relate, and pairs it must not relate.
func TestNearRelatesComputingSynonyms(t *testing.T) {
	if err := NearError(); err != nil {
		t.Fatal(err)
	}
	for _, p := range [][2]string{
		{"folder", "directories"}, // WordNet's folder is a booklet
		{"image", "picture"},
		{"admin", "sysadmin"},
	} {
		if !near(p[0], p[1]) {
			t.Errorf("%s and %s are not near: %v, %v", p[0], p[1], Near(Stem(p[0])), Near(Stem(p[1])))
		}
	}
	for _, p := range [][2]string{
		{"file", "army"}, // a thesaurus's noise (Moby lists both)
		{"create", "delete"},
		{"folder", "file"},
	} {
		if near(p[0], p[1]) {
			t.Errorf("%s and %s are near", p[0], p[1])
		}
	}
	if shares("folder", "directory") {
		t.Errorf("WordNet relates folder and directory: the FOLDOC table is not needed for them")
	}
	if len(Near(Stem("directory"))) == 0 || Near("no-such-stem") != nil {
		t.Errorf("Near: directory %v, unknown %v", Near(Stem("directory")), Near("no-such-stem"))
	}
}
