package lexicon

import "github.com/kljensen/snowball/english"

// Stem reduces an ASCII lower-case word to its Porter2 (Snowball English)
// stem, so that inflected and derived forms meet: numbers → number,
// directories → directori = directory's, creating → creat. Words of two
// letters or fewer and words with other characters (digits, non-ASCII) are
// returned unchanged. Documents, queries and the synonym table (built by
// ./gen with this very function) are stemmed alike.
func Stem(w string) string {
	if len(w) <= 2 || !isASCIILetters(w) {
		return w
	}
	return english.Stem(w, true)
}

func isASCIILetters(w string) bool {
	for i := 0; i < len(w); i++ {
		if c := w[i]; c < 'a' || c > 'z' {
			return false
		}
	}
	return true
}
