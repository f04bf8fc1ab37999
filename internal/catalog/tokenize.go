package catalog

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"

	"github.com/isogate/isogate/internal/lexicon"
)

// token is one indexed or queried word: its stem (the index key) and the
// lower-cased surface form it came from.
type token struct {
	stem, word string
}

// stopwords are dropped from documents and queries: they carry no meaning
// for tool search and would otherwise attract fuzzy corrections.
var stopwords = map[string]bool{
	"a": true, "all": true, "an": true, "and": true, "are": true, "as": true, "at": true,
	"be": true, "by": true, "can": true, "do": true, "for": true,
	"from": true, "how": true, "i": true, "if": true, "in": true,
	"into": true, "is": true, "it": true, "its": true, "me": true,
	"my": true, "of": true, "on": true, "or": true, "so": true,
	"that": true, "the": true, "their": true, "then": true, "there": true,
	"this": true, "to": true, "use": true, "was": true, "we": true,
	"what": true, "when": true, "which": true, "will": true, "with": true,
	"you": true, "your": true,
	// Small counts: "add two numbers" is about numbers, and a tool that
	// "supports two mechanisms" is no answer to it.
	"one": true, "two": true, "three": true, "four": true, "five": true,
	"six": true, "seven": true, "eight": true, "nine": true, "ten": true,
}

// tokenize splits s into words (runs of letters and digits, further split at
// camelCase boundaries) after folding it (fold), lower-cases them, drops
// stopwords and stems them. Queries and tool text go through it alike.
func tokenize(s string, dst []token) []token {
	splitWords(fold(s), func(w string) {
		w = strings.ToLower(w)
		if stopwords[w] {
			return
		}
		dst = append(dst, token{stem: lexicon.Stem(w), word: w})
	})
	return dst
}

// fold normalises s for matching: compatibility forms become their plain
// letters (full-width "ｅｃｈｏ" → "echo", ligatures, superscripts), and
// the accents of Latin, Greek and Cyrillic letters are removed ("écho" and
// "e\u0301cho" → "echo"): NFKD, without the Combining Diacritical Marks
// (U+0300–U+036F), then NFC. Other scripts' combining marks stay: a
// Japanese voiced mark or an Indic vowel sign changes the word. ASCII text,
// nearly every query and tool, is returned as is without allocating.
func fold(s string) string {
	ascii := true
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			ascii = false
			break
		}
	}
	if ascii {
		return s
	}
	d := norm.NFKD.String(s)
	b := make([]byte, 0, len(d))
	for _, r := range d {
		if r < 0x300 || r > 0x36f {
			b = utf8.AppendRune(b, r)
		}
	}
	return norm.NFC.String(string(b))
}

// splitWords calls fn for every word of s. Words are maximal runs of letters
// and digits (with the combining marks that follow them: the vowel signs of
// Indic scripts are part of their words), split at camelCase boundaries: "getTinyImage" → get, Tiny,
// Image; "HTTPServer" → HTTP, Server. Separators such as '-', '_' and '.'
// end a word.
func splitWords(s string, fn func(string)) {
	start := -1
	var prev rune
	for i, r := range s {
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) && !(start >= 0 && unicode.IsMark(r)) {
			if start >= 0 {
				fn(s[start:i])
				start = -1
			}
			continue
		}
		if start < 0 {
			start, prev = i, r
			continue
		}
		boundary := unicode.IsLower(prev) && unicode.IsUpper(r)
		if !boundary && unicode.IsUpper(prev) && unicode.IsUpper(r) {
			// "HTTPServer": split before the 'S' that starts a capitalised word.
			if next, _ := utf8.DecodeRuneInString(s[i+utf8.RuneLen(r):]); unicode.IsLower(next) {
				boundary = true
			}
		}
		if boundary {
			fn(s[start:i])
			start = i
		}
		prev = r
	}
	if start >= 0 {
		fn(s[start:])
	}
}
