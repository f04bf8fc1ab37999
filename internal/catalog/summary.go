package catalog

import (
	"strings"
	"unicode"
)

// maxSummary is the maximum length of a summary in runes.
const maxSummary = 200

// summarize returns the first sentence of a description: the text up to the
// first blank line, and within it up to the first '.', '!' or '?' followed
// by whitespace (common abbreviations such as "e.g." do not end it), with
// whitespace collapsed and cut at a word boundary to at most 200 runes.
func summarize(desc string) string {
	if i := strings.Index(desc, "\n\n"); i >= 0 {
		desc = desc[:i]
	}
	desc = strings.Join(strings.Fields(desc), " ")
	for i := 0; i < len(desc); i++ {
		c := desc[i]
		if c != '.' && c != '!' && c != '?' {
			continue
		}
		if i+1 < len(desc) && desc[i+1] != ' ' {
			continue
		}
		if c == '.' && isAbbrev(desc[:i+1]) {
			continue
		}
		desc = desc[:i+1]
		break
	}
	r := []rune(desc)
	if len(r) <= maxSummary {
		return desc
	}
	cut := maxSummary - 1
	for j := cut; j > maxSummary/2; j-- {
		if unicode.IsSpace(r[j]) {
			cut = j
			break
		}
	}
	return strings.TrimRightFunc(string(r[:cut]), func(r rune) bool {
		return unicode.IsSpace(r) || unicode.IsPunct(r)
	}) + "…"
}

// isAbbrev reports whether s ends with an abbreviation whose period does not
// end a sentence.
func isAbbrev(s string) bool {
	low := strings.ToLower(s)
	for _, a := range []string{"e.g.", "i.e.", "etc.", "vs.", "approx.", "incl.", "resp."} {
		if strings.HasSuffix(low, a) && (len(low) == len(a) || !unicode.IsLetter(rune(low[len(low)-len(a)-1]))) {
			return true
		}
	}
	return false
}
