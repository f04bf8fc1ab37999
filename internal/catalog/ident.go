package catalog

import (
	"slices"
	"strconv"
	"strings"

	"github.com/isogate/isogate/internal/jssyntax"
)

// reservedWord reports names that cannot be JavaScript binding
// identifiers: the strict-mode reserved words, plus globals whose rebinding
// is a trap (undefined, NaN, Infinity).
func reservedWord(name string) bool {
	return jssyntax.IsReserved(name) || name == "undefined" || name == "NaN" || name == "Infinity"
}

// JSIdent returns a valid JavaScript identifier derived from name: every
// character that may not appear in an identifier is replaced by '_', a '_' is
// prepended when the first character may not start one (e.g. a digit), and
// reserved words get a trailing '_' ("delete" → "delete_"). Unicode letters
// are kept. The empty string maps to "_".
//
// JSIdent is deterministic but not injective ("get-sum" and "get_sum" both
// map to "get_sum"); the catalogue resolves such collisions with numeric
// suffixes.
func JSIdent(name string) string {
	if name == "" {
		return "_"
	}
	var b strings.Builder
	b.Grow(len(name) + 1)
	for i, r := range name {
		if i == 0 && !jssyntax.IsIDStart(r) && jssyntax.IsIDPart(r) {
			b.WriteByte('_')
		}
		if jssyntax.IsIDPart(r) {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	s := b.String()
	if reservedWord(s) {
		s += "_"
	}
	return s
}

// assignIdents maps every name in names to a distinct JS identifier.
// A name that already is its own identifier keeps it; the others get
// JSIdent(name), or JSIdent(name)+"_2", "_3", … when that is taken, in
// sorted order of the original names, so the outcome is deterministic and
// stable when unrelated names are added.
func assignIdents(names []string) map[string]string {
	out := make(map[string]string, len(names))
	used := make(map[string]bool, len(names))
	for _, n := range names {
		if JSIdent(n) == n {
			out[n] = n
			used[n] = true
		}
	}
	sorted := make([]string, 0, len(names))
	for _, n := range names {
		if _, ok := out[n]; !ok {
			sorted = append(sorted, n)
		}
	}
	slices.Sort(sorted)
	for _, n := range sorted {
		base := JSIdent(n)
		id := base
		for i := 2; used[id]; i++ {
			id = base + "_" + strconv.Itoa(i)
		}
		out[n] = id
		used[id] = true
	}
	return out
}
