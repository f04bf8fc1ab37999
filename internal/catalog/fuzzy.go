package catalog

import "strings"

// EditDistance is the optimal-string-alignment distance between a and b
// (insertions, deletions, substitutions and adjacent transpositions).
func EditDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	return osaDistance(ra, rb, len(ra)+len(rb))
}

// osaDistance returns the optimal-string-alignment (restricted
// Damerau-Levenshtein) distance between a and b: insertions, deletions,
// substitutions and transpositions of adjacent runes each cost 1. It stops
// early and returns max+1 once the distance is known to exceed max.
func osaDistance(a, b []rune, max int) int {
	var buf []int
	return osaDistanceBuf(a, b, max, &buf)
}

// osaDistanceBuf is osaDistance with a reusable scratch buffer.
func osaDistanceBuf(a, b []rune, max int, buf *[]int) int {
	if d := len(a) - len(b); d > max || -d > max {
		return max + 1
	}
	if len(a) == 0 || len(b) == 0 {
		return len(a) + len(b)
	}
	// Three rolling rows: two back (for transpositions), previous, current.
	w := len(b) + 1
	if cap(*buf) < 3*w {
		*buf = make([]int, 3*w)
	}
	rows := (*buf)[:3*w]
	prev2, prev, cur := rows[:w], rows[w:2*w], rows[2*w:]
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		rowMin := cur[0]
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			v := min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				v = min(v, prev2[j-2]+1)
			}
			cur[j] = v
			rowMin = min(rowMin, v)
		}
		if rowMin > max {
			return max + 1
		}
		prev2, prev, cur = prev, cur, prev2
	}
	if d := prev[len(b)]; d <= max {
		return d
	}
	return max + 1
}

// maxEdits is the largest edit distance tolerated when correcting a query
// term of n runes: none below 3 runes, 1 up to 7, 2 from 8 on (two edits in
// a short word reach unrelated words: "weather" → "whether").
func maxEdits(n int) int {
	switch {
	case n < 3:
		return 0
	case n < 8:
		return 1
	default:
		return 2
	}
}

// correction ranks one vocabulary candidate for a misspelt term. Prefix
// relations (the term extends a vocabulary word, "summ" → "sum", or is the
// start of one, "temp" → "temperature") rank before plain edits because they
// are the more likely intent; within a class, smaller length difference or
// edit distance wins, then the more common term, then alphabetical order.
type correction struct {
	id     int32
	class  int // 0 prefix relation, 1 edit distance
	cost   int // length difference (class 0) or edit distance (class 1)
	df     int
	term   string
	usable bool
}

func (c correction) better(o correction) bool {
	if !o.usable {
		return c.usable
	}
	if c.class != o.class {
		return c.class < o.class
	}
	if c.cost != o.cost {
		return c.cost < o.cost
	}
	if c.df != o.df {
		return c.df > o.df
	}
	return c.term < o.term
}

// correct finds the vocabulary term closest to the unknown query word
// (tok.word) or, failing that, stem (tok.stem), or returns false if none is
// close enough (see [maxEdits]). Words are compared to the catalogue's
// surface words first: a stemmer cuts a misspelt word elsewhere than the
// right one ("envrionmnet" is no misspelling of the stem "environ"); stems
// second, for misspelt inflections ("isues" → issue).
func (ix *index) correct(tok token) (int32, bool) {
	if id, ok := ix.closest(tok.word, ix.surface, ix.surfRunes); ok {
		return id, true
	}
	return ix.closest(tok.stem, ix.vocab, ix.vocabRunes)
}

// closest finds the term of words (indexed by term id, with their runes)
// closest to t.
func (ix *index) closest(t string, words []string, runes [][]rune) (int32, bool) {
	tr := []rune(t)
	n := len(tr)
	maxD := maxEdits(n)
	if maxD == 0 || n > maxCorrectedRunes {
		return -1, false
	}
	var best correction
	var buf []int
	for id, v := range words {
		vr := runes[id]
		c := correction{id: int32(id), df: len(ix.postings[id]), term: v}
		switch {
		case len(vr) >= 3 && 2*len(vr) >= n && strings.HasPrefix(t, v):
			c.class, c.cost, c.usable = 0, n-len(vr), true
		case len(vr) > n && strings.HasPrefix(v, t):
			c.class, c.cost, c.usable = 0, len(vr)-n, true
		case !sameStart(tr, vr):
			// Typos rarely hit the first letter: "weather" must not become
			// "either", two edits away.
		default:
			if d := osaDistanceBuf(tr, vr, maxD, &buf); d <= maxD {
				c.class, c.cost, c.usable = 1, d, true
			}
		}
		if c.usable && c.better(best) {
			best = c
		}
	}
	return best.id, best.usable
}

// maxCorrectedRunes bounds the length of a query word that is corrected at
// all: longer words are no typos, and the edit distance costs time.
const maxCorrectedRunes = 64

// sameStart reports whether a and b begin with the same rune, or with the
// same two runes swapped ("smu" and "mus" for "sum" and "usm").
func sameStart(a, b []rune) bool {
	if len(a) == 0 || len(b) == 0 {
		return false
	}
	if a[0] == b[0] {
		return true
	}
	return len(a) > 1 && len(b) > 1 && a[0] == b[1] && a[1] == b[0]
}

// maxClosestName bounds the names Closest considers: longer ones are not
// typos of a name, and edit distances on them would cost the gateway CPU.
const maxClosestName = 64

// Closest returns the candidate nearest to name (edit distance ≤ 2, or a
// prefix of it either way), or "". It is the "did you mean" for a name
// within a given set (a backend's tools, the backend names); a tool name
// across the whole catalogue goes through Lookup's suggestions. Names
// longer than maxClosestName and candidates whose length differs too much
// are skipped without computing a distance, so the cost stays linear in
// the candidates.
func Closest(name string, candidates []string) string {
	if len(name) > maxClosestName {
		return ""
	}
	best, bestDist := "", 3
	lname := strings.ToLower(name)
	for _, c := range candidates {
		if len(c) > maxClosestName {
			continue
		}
		lc := strings.ToLower(c)
		prefix := len(lname) >= 3 && (strings.HasPrefix(lc, lname) || strings.HasPrefix(lname, lc))
		if !prefix && (len(lc) > len(lname)+2 || len(lname) > len(lc)+2) {
			continue
		}
		d := EditDistance(lname, lc)
		if d > 0 && prefix {
			d = min(d, 1)
		}
		if d < bestDist {
			best, bestDist = c, d
		}
	}
	return best
}
