// Package textcut cuts text to a budget without splitting a UTF-8 encoded
// rune. It is a leaf (it imports only the standard library), so every
// package of the module, v8sandbox included, may use it. Markers such as
// "…" or "[truncated]" are the caller's to add.
//
// The boundaries are those a Go range loop sees: each valid UTF-8 encoding
// is one unit, and each byte that is not part of one is a unit of its own
// (utf8.DecodeRune reads it as RuneError, width 1). A cut therefore moves
// only to keep a valid encoding whole, by at most utf8.UTFMax-1 bytes; on
// invalid UTF-8 it may fall next to or between the invalid bytes. Cutting
// valid UTF-8 always gives valid UTF-8.
package textcut

import "unicode/utf8"

// Text is what Prefix and Suffix cut: a string or a byte slice.
type Text interface{ ~string | ~[]byte }

// Prefix returns the longest prefix of s that is at most n bytes long and
// does not end inside a rune: all of s when n >= len(s), empty when n <= 0.
// It slices s (no copy).
func Prefix[T Text](s T, n int) T { return s[:floor(s, n)] }

// Suffix returns the longest suffix of s that is at most n bytes long and
// does not start inside a rune: all of s when n >= len(s), empty when
// n <= 0. It slices s (no copy).
func Suffix[T Text](s T, n int) T {
	if n <= 0 {
		return s[len(s):]
	}
	return s[ceil(s, len(s)-n):]
}

// Clip returns s when it is at most n bytes long, and otherwise Prefix(s, n)
// followed by mark (so the result may be up to len(mark) bytes longer than
// n). The mark, such as "…", says that s was cut.
func Clip(s string, n int, mark string) string {
	if len(s) <= n {
		return s
	}
	return Prefix(s, n) + mark
}

// Runes returns the prefix of s made of its first n runes (as a range loop
// counts them): all of s when it has no more, empty when n <= 0.
func Runes(s string, n int) string {
	if n <= 0 {
		return ""
	}
	for i := range s {
		if n == 0 {
			return s[:i]
		}
		n--
	}
	return s
}

// floor returns the largest boundary of s at or below i (i is clamped to
// [0, len(s)]).
func floor[T Text](s T, i int) int {
	if i <= 0 {
		return 0
	}
	if i >= len(s) {
		return len(s)
	}
	if start, _, ok := straddle(s, i); ok {
		return start
	}
	return i
}

// ceil returns the smallest boundary of s at or above i (i is clamped to
// [0, len(s)]).
func ceil[T Text](s T, i int) int {
	if i <= 0 {
		return 0
	}
	if i >= len(s) {
		return len(s)
	}
	if _, end, ok := straddle(s, i); ok {
		return end
	}
	return i
}

// straddle reports the valid multi-byte encoding s[start:end] that byte i
// lies strictly inside (start < i < end), if there is one; 0 < i < len(s).
func straddle[T Text](s T, i int) (start, end int, ok bool) {
	if utf8.RuneStart(s[i]) {
		return 0, 0, false
	}
	for j := i - 1; j >= 0 && j > i-utf8.UTFMax; j-- {
		if utf8.RuneStart(s[j]) {
			// Only s[j] starts the unit holding byte i: the bytes between are
			// continuation bytes, which start nothing.
			_, size := utf8.DecodeRuneInString(string(s[j:min(len(s), j+utf8.UTFMax)]))
			return j, j + size, j+size > i
		}
	}
	return 0, 0, false
}
