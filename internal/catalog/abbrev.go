package catalog

import (
	"slices"
	"strings"

	"github.com/isogate/isogate/internal/lexicon"
)

// Abbreviations the catalogue itself defines: no dictionary knows that a
// "repo" is a repository or a "PR" a pull request, but a catalogue that
// says both "repo" and "repository", or "pull request" again and again,
// does.
const (
	// abbrevMinRunes and abbrevMaxRunes bound a clipped word ("repo",
	// "dir", "config"): shorter ones are prefixes of too much.
	abbrevMinRunes = 3
	abbrevMaxRunes = 6
	// acronymMinCount is how often two adjacent words must occur in the
	// catalogue for their initials to stand for them: a term, not a chance
	// neighbourhood.
	acronymMinCount = 3
)

// buildAbbrevs derives, from the indexed terms, the clipped words: a word
// of the catalogue (abbrevMinRunes to abbrevMaxRunes letters, unknown to
// the lexicon) that begins exactly one longer word of it ("repo" →
// "repository") stands for that word too; and the two-letter acronyms: the
// initials of two adjacent words that occur together at least
// acronymMinCount times ("pr" → "pull request"), the most frequent pair
// when several share initials.
func (ix *index) buildAbbrevs(entries []*Entry) {
	ix.clipped = map[int32]int32{}
	bySurface := make([]int32, len(ix.surface))
	for id := range bySurface {
		bySurface[id] = int32(id)
	}
	slices.SortFunc(bySurface, func(a, b int32) int { return strings.Compare(ix.surface[a], ix.surface[b]) })
	for id, w := range ix.surface {
		if n := len(ix.surfRunes[id]); n < abbrevMinRunes || n > abbrevMaxRunes || !isLetters(w) {
			continue
		}
		if rel := lexicon.Concepts(ix.vocab[id]); len(rel.Own)+len(rel.Hyper) > 0 {
			continue // a word of its own ("add" is no clipped "address")
		}
		i, _ := slices.BinarySearchFunc(bySurface, w, func(a int32, w string) int { return strings.Compare(ix.surface[a], w) })
		long := int32(-1)
		for ; i < len(bySurface) && strings.HasPrefix(ix.surface[bySurface[i]], w); i++ {
			o := bySurface[i]
			if o == int32(id) || len(ix.surface[o]) < len(w)+2 {
				continue
			}
			if long >= 0 && long != o {
				long = -2 // begins several words: no telling which
				break
			}
			long = o
		}
		if long >= 0 {
			ix.clipped[int32(id)] = long
		}
	}

	type pair struct{ a, b int32 }
	counts := map[pair]int{}
	for _, e := range entries {
		for _, f := range [...]int{fieldName, fieldDesc, fieldParamDesc} {
			toks := e.td.fieldToks[f]
			for i := 1; i < len(toks); i++ {
				a, b := ix.terms[toks[i-1].stem], ix.terms[toks[i].stem]
				if a != b && len(toks[i-1].word) > 1 && len(toks[i].word) > 1 {
					counts[pair{a, b}]++
				}
			}
		}
	}
	ix.acronyms = map[string][2]int32{}
	best := map[string]int{}
	for p, n := range counts {
		if n < acronymMinCount {
			continue
		}
		acr := ix.surface[p.a][:1] + ix.surface[p.b][:1]
		if n > best[acr] || (n == best[acr] && less2(ix, p.a, p.b, ix.acronyms[acr])) {
			best[acr] = n
			ix.acronyms[acr] = [2]int32{p.a, p.b}
		}
	}
}

// less2 orders two word pairs by their surfaces, so that ties between
// pairs of equal counts are broken the same way on every run.
func less2(ix *index, a, b int32, than [2]int32) bool {
	x := ix.surface[a] + " " + ix.surface[b]
	y := ix.surface[than[0]] + " " + ix.surface[than[1]]
	return x < y
}

// isLetters reports whether w is made of ASCII letters only.
func isLetters(w string) bool {
	for i := 0; i < len(w); i++ {
		if w[i] < 'a' || w[i] > 'z' {
			return false
		}
	}
	return w != ""
}
