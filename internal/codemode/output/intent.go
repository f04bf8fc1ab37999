package output

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/isogate/isogate/internal/jssyntax"
	"github.com/isogate/isogate/internal/textcut"
)

// stopWords are dropped from an intent before matching: function words and
// the request verbs agents put in front of what they actually want.
var stopWords = map[string]bool{
	"a": true, "an": true, "the": true, "of": true, "and": true, "or": true,
	"in": true, "on": true, "at": true, "to": true, "for": true, "with": true,
	"by": true, "from": true, "into": true, "about": true, "as": true,
	"is": true, "are": true, "was": true, "were": true, "be": true, "been": true,
	"it": true, "its": true, "this": true, "that": true, "these": true,
	"those": true, "there": true, "all": true, "any": true, "some": true,
	"i": true, "me": true, "my": true, "we": true, "our": true, "you": true,
	"your": true, "what": true, "which": true, "who": true, "where": true,
	"when": true, "why": true, "how": true, "do": true, "does": true,
	"please": true, "show": true, "find": true, "get": true, "give": true,
	"want": true, "need": true, "only": true, "just": true,
}

// minTermShareTenths: a section is kept when it contains at least this many
// tenths of the intent's terms (rounded up, and at least one term).
const minTermShareTenths = 3

// maxNoteIntent caps how much of the intent is echoed in the note.
const maxNoteIntent = 80

// intentTerms returns the distinct lowercased words of intent, split on
// anything that is not a letter or digit, without stop words and
// one-letter words. A trailing plural "s" is dropped from words of four or
// more letters ("bugs" matches "bug"), which only ever widens the
// substring match.
func intentTerms(intent string) []string {
	words := strings.FieldsFunc(strings.ToLower(intent), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	})
	var terms []string
	seen := map[string]bool{}
	for _, w := range words {
		if stopWords[w] {
			continue
		}
		if utf8.RuneCountInString(w) < 2 && !unicode.IsDigit(rune(w[0])) {
			continue
		}
		if len(w) >= 4 && strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss") {
			w = w[:len(w)-1]
		}
		if !seen[w] {
			seen[w] = true
			terms = append(terms, w)
		}
	}
	return terms
}

// matchesTerms reports whether text contains (case-insensitively, as a
// substring) at least need of terms.
func matchesTerms(text string, terms []string, need int) bool {
	lc := strings.ToLower(text)
	n := 0
	for _, t := range terms {
		if strings.Contains(lc, t) {
			n++
			if n >= need {
				return true
			}
		}
	}
	return false
}

// filterResult is the outcome of the intent filter.
type filterResult struct {
	text     string // the (possibly reduced) output
	note     string // one-line note for the agent, "" when nothing to say
	doc      *jval  // parsed form of text when it is JSON, else nil
	filtered bool   // some sections were dropped
}

// filterIntent keeps the sections of raw that mention enough of the
// intent's terms. Sections are the items of the JSON result's main array
// (see mainArray) when raw is a JSON container, else blank-line separated
// paragraphs, else lines (of the text inside when raw is a JSON string). JSON without such an array, and text with fewer than two
// sections, is left alone; so is everything when no section matches (with a
// note saying so) or every section matches (silently).
func filterIntent(raw, intent string, valid bool) filterResult {
	res := filterResult{text: raw}
	terms := intentTerms(intent)
	if len(terms) == 0 {
		return res
	}
	need := max(1, (len(terms)*minTermShareTenths+9)/10)

	if doc, ok := parseJSON(raw, valid); ok {
		res.doc = doc
		path, arr, ok := mainArray(doc)
		if !ok || len(arr.vals) < 2 {
			return res
		}
		var kept []*jval
		for _, it := range arr.vals {
			// Terms hold no spaces, so matching the compact encoding is the
			// same as matching the pretty-printed item, and cheaper.
			if matchesTerms(it.compact(0), terms, need) {
				kept = append(kept, it)
			}
		}
		res.note = filterNote(len(kept), len(arr.vals), "items", intent)
		if len(kept) == 0 || len(kept) == len(arr.vals) {
			return res
		}
		sub := &jval{kind: kArray, vals: kept}
		sub.resize()
		res.doc = replaceAt(doc, path, sub)
		res.text = res.doc.pretty()
		res.filtered = true
		return res
	}

	// A program that returns a string gets it as a JSON string literal:
	// filter the text inside, and keep the literal form.
	text, quoted := raw, false
	if t := strings.Trim(raw, jsonSpace); strings.HasPrefix(t, `"`) {
		var s string
		if json.Unmarshal([]byte(t), &s) == nil {
			text, quoted = s, true
		}
	}
	kept, note := filterText(text, terms, need, intent)
	res.note = note
	if kept == "" {
		return res
	}
	if quoted {
		kept = jsonString(kept)
	}
	res.text = kept
	res.filtered = true
	return res
}

// filterText keeps the sections of text that match need of terms. It
// returns "" for kept when nothing was dropped (too few sections, none
// matched, or all did), with the note to show.
func filterText(text string, terms []string, need int, intent string) (kept, note string) {
	sections, sep, unit := splitSections(text)
	if len(sections) < 2 {
		return "", ""
	}
	var keep []string
	for _, s := range sections {
		if matchesTerms(s, terms, need) {
			keep = append(keep, s)
		}
	}
	note = filterNote(len(keep), len(sections), unit, intent)
	if len(keep) == 0 || len(keep) == len(sections) {
		return "", note
	}
	return strings.Join(keep, sep), note
}

// jsonString encodes s as JSON.stringify would.
func jsonString(s string) string { return string(jssyntax.AppendString(nil, s)) }

// filterNote is the note line for kept of total sections; "" when all were
// kept (nothing to report).
func filterNote(kept, total int, unit, intent string) string {
	intent = strings.Join(strings.Fields(intent), " ")
	intent = textcut.Clip(intent, maxNoteIntent, "…")
	q := strconv.Quote(intent)
	switch kept {
	case 0:
		return fmt.Sprintf("[intent filter: no %s matched %s; showing full output]", unit, q)
	case total:
		return ""
	default:
		return fmt.Sprintf("[intent filter: kept %d of %d %s matching %s]", kept, total, unit, q)
	}
}

// splitSections splits text into blank-line separated paragraphs when there
// are at least two (joined back with "\n\n"), else into its non-empty lines
// (joined with "\n"). unit names the kind of section for the note.
func splitSections(text string) (sections []string, sep, unit string) {
	lines := strings.Split(text, "\n")
	var cur []string
	for _, l := range lines {
		if strings.TrimSpace(l) == "" {
			if len(cur) > 0 {
				sections = append(sections, strings.Join(cur, "\n"))
				cur = nil
			}
			continue
		}
		cur = append(cur, l)
	}
	if len(cur) > 0 {
		sections = append(sections, strings.Join(cur, "\n"))
	}
	if len(sections) >= 2 {
		return sections, "\n\n", "sections"
	}
	sections = sections[:0]
	for _, l := range lines {
		if strings.TrimSpace(l) != "" {
			sections = append(sections, l)
		}
	}
	return sections, "\n", "lines"
}

// replaceAt returns a copy of doc in which the value at path (child
// positions from the root) is replaced by v. Only the containers along path
// are copied.
func replaceAt(doc *jval, path []int, v *jval) *jval {
	if len(path) == 0 {
		return v
	}
	cp := *doc
	cp.vals = append([]*jval(nil), doc.vals...)
	cp.vals[path[0]] = replaceAt(cp.vals[path[0]], path[1:], v)
	cp.resize()
	return &cp
}
