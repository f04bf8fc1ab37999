package output

import (
	"encoding/json"
	"fmt"
	"regexp"
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
	terms, _ := intentWords(intent)
	return terms
}

// intentWords returns intentTerms and, for notes, each term's word as
// the intent wrote it (lowercased, plural kept).
func intentWords(intent string) (terms, words []string) {
	seen := map[string]bool{}
	for _, w := range strings.FieldsFunc(strings.ToLower(intent), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	}) {
		if stopWords[w] {
			continue
		}
		if utf8.RuneCountInString(w) < 2 && !unicode.IsDigit(rune(w[0])) {
			continue
		}
		term := w
		if len(w) >= 4 && strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss") {
			term = w[:len(w)-1]
		}
		if !seen[term] {
			seen[term] = true
			terms = append(terms, term)
			words = append(words, w)
		}
	}
	return terms, words
}

// maxNoteTerms caps the words an approximate note lists, maxNoteWord the
// bytes of each.
const (
	maxNoteTerms = 8
	maxNoteWord  = 24
)

// rePair finds the key=value (or key:value) pairs of an intent, such as
// owner=dee or state:open: a key starting with a letter, no spaces.
var rePair = regexp.MustCompile(`(?:^|[^\pL\pN_])([\pL_][\pL\pN_.-]*)[=:]([\pL\pN_][\pL\pN_.@/-]*)`)

// intentMatch is what a section must contain to match an intent: each
// key=value pair of the intent exactly (the key, then = or :, then the
// value, quotes and spaces allowed around the separator, so that
// owner=dee matches "owner": "dee" but not owner=bo or owner=deepak), and
// at least need of its other terms (case-insensitive substrings).
type intentMatch struct {
	pairs     []*regexp.Regexp
	pairNames []string // "owner=dee", for the note
	terms     []string
	words     []string // the terms as written, for the note
	need      int
}

// parseIntent splits intent into its pairs and its terms (intentTerms of
// the rest).
func parseIntent(intent string) intentMatch {
	var m intentMatch
	rest := rePair.ReplaceAllStringFunc(intent, func(s string) string {
		sub := rePair.FindStringSubmatch(s)
		key, value := sub[1], sub[2]
		name := strings.ToLower(key + "=" + value)
		for _, n := range m.pairNames {
			if n == name {
				return s[:len(s)-len(key)-len(value)-1]
			}
		}
		m.pairNames = append(m.pairNames, name)
		m.pairs = append(m.pairs, regexp.MustCompile(`(?i)(?:^|[^\pL\pN_])`+regexp.QuoteMeta(key)+
			`["']?\s*[:=]\s*["']?`+regexp.QuoteMeta(value)+`(?:$|[^\pL\pN_])`))
		return s[:len(s)-len(key)-len(value)-1] + " "
	})
	m.terms, m.words = intentWords(rest)
	if len(m.terms) > 0 {
		m.need = max(1, (len(m.terms)*minTermShareTenths+9)/10)
	}
	return m
}

// empty reports an intent with nothing to match (only stop words).
func (m intentMatch) empty() bool { return len(m.pairs) == 0 && len(m.terms) == 0 }

// matches reports whether text contains every pair and need of the terms.
func (m intentMatch) matches(text string) bool {
	for _, p := range m.pairs {
		if !p.MatchString(text) {
			return false
		}
	}
	if m.need == 0 {
		return true
	}
	lc := strings.ToLower(text)
	n := 0
	for _, t := range m.terms {
		if strings.Contains(lc, t) {
			n++
			if n >= m.need {
				return true
			}
		}
	}
	return false
}

// qualifier says, for the note, how loose the match is: "" when a section
// must contain everything the intent names, else what a matching section
// contains, e.g. " (approximate match: at least 1 of open, bugs)".
func (m intentMatch) qualifier() string {
	if m.need >= len(m.terms) {
		return ""
	}
	words := make([]string, 0, min(len(m.words), maxNoteTerms+1))
	for i, w := range m.words {
		if i == maxNoteTerms {
			words = append(words, "…")
			break
		}
		words = append(words, textcut.Clip(w, maxNoteWord, "…"))
	}
	pairs := ""
	if len(m.pairNames) > 0 {
		pairs = strings.Join(m.pairNames, ", ") + " and "
	}
	return fmt.Sprintf(" (approximate match: %sat least %d of %s)", pairs, m.need, strings.Join(words, ", "))
}

// filterResult is the outcome of the intent filter.
type filterResult struct {
	text     string // the (possibly reduced) output
	note     string // one-line note for the agent, "" when nothing to say
	doc      *jval  // parsed form of text when it is JSON, else nil
	filtered bool   // some sections were dropped
}

// filterIntent keeps the sections of raw that mention enough of the
// intent's terms; parse parses raw's JSON. Sections are the items of the JSON result's main array
// (see mainArray) when raw is a JSON container, else blank-line separated
// paragraphs, else lines (of the text inside when raw is a JSON string). JSON without such an array, and text with fewer than two
// sections, is left alone; so is everything when no section matches (with a
// note saying so) or every section matches (silently).
func filterIntent(raw, intent string, parse func() (*jval, bool)) filterResult {
	res := filterResult{text: raw}
	m := parseIntent(intent)
	if m.empty() {
		return res
	}

	if doc, ok := parse(); ok {
		res.doc = doc
		path, arr, ok := mainArray(doc)
		if !ok || len(arr.vals) < 2 {
			return res
		}
		var kept []*jval
		for _, it := range arr.vals {
			// Terms hold no spaces, so matching the compact encoding is the
			// same as matching the pretty-printed item, and cheaper.
			if m.matches(it.compact(0)) {
				kept = append(kept, it)
			}
		}
		res.note = filterNote(len(kept), len(arr.vals), "items", intent, m)
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
	kept, note := filterText(text, m, intent)
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

// filterText keeps the sections of text that match m. It returns "" for
// kept when nothing was dropped (too few sections, none matched, or all
// did), with the note to show.
func filterText(text string, m intentMatch, intent string) (kept, note string) {
	sections, sep, unit := splitSections(text)
	if len(sections) < 2 {
		return "", ""
	}
	var keep []string
	for _, s := range sections {
		if m.matches(s) {
			keep = append(keep, s)
		}
	}
	note = filterNote(len(keep), len(sections), unit, intent, m)
	if len(keep) == 0 || len(keep) == len(sections) {
		return "", note
	}
	return strings.Join(keep, sep), note
}

// jsonString encodes s as JSON.stringify would.
func jsonString(s string) string { return string(jssyntax.AppendString(nil, s)) }

// filterNote is the note line for kept of total sections; "" when all were
// kept (nothing to report). It says when the match is approximate, and
// what each kept section has, so that a kept line that lacks one of the
// intent's words does not read as a wrong match.
func filterNote(kept, total int, unit, intent string, m intentMatch) string {
	intent = strings.Join(strings.Fields(intent), " ")
	intent = textcut.Clip(intent, maxNoteIntent, "…")
	q := strconv.Quote(intent)
	switch kept {
	case 0:
		return fmt.Sprintf("[intent filter: no %s matched %s%s; showing full output]", unit, q, m.qualifier())
	case total:
		return ""
	default:
		return fmt.Sprintf("[intent filter: kept %d of %d %s matching %s%s]", kept, total, unit, q, m.qualifier())
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
