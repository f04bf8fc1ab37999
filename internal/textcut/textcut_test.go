package textcut

import (
	"math"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestPrefix(t *testing.T) {
	for _, c := range []struct {
		name string
		s    string
		n    int
		want string
	}{
		{"ascii", "hello", 3, "hel"},
		{"empty", "", 3, ""},
		{"n zero", "hello", 0, ""},
		{"n negative", "hello", -2, ""},
		{"n is the smallest int", "hello", math.MinInt, ""},
		{"n is len", "héllo", 6, "héllo"},
		{"n above len", "héllo", 99, "héllo"},
		{"n is the largest int", "héllo", math.MaxInt, "héllo"},
		{"2-byte rune at the cut", "aé", 2, "a"},
		{"2-byte rune ends at the cut", "aéb", 3, "aé"},
		{"3-byte rune at the cut", "a€", 2, "a"},
		{"3-byte rune, last byte at the cut", "a€", 3, "a"},
		{"3-byte rune ends at the cut", "a€b", 4, "a€"},
		{"4-byte rune at the cut", "a😀", 2, "a"},
		{"4-byte rune, last byte at the cut", "a😀", 4, "a"},
		{"4-byte rune ends at the cut", "a😀b", 5, "a😀"},
		{"first rune longer than n", "😀", 3, ""},
		{"U+FFFD encoded", "a\uFFFD", 3, "a"},
		// Invalid UTF-8: a byte that is not part of a valid encoding is a
		// unit of its own, so the cut may fall among such bytes.
		{"stray continuation bytes", "a\x80\x80\x80\x80\x80", 4, "a\x80\x80\x80"},
		{"continuation after ascii", "a\x80b", 2, "a\x80"},
		{"lone start byte", "a\xe2b", 2, "a\xe2"},
		{"incomplete 3-byte sequence", "a\xe2\x82b", 3, "a\xe2\x82"},
		{"overlong encoding", "\xc0\xafz", 1, "\xc0"},
		{"surrogate", "\xed\xa0\x80z", 2, "\xed\xa0"},
		{"valid rune after garbage", "\x80é", 2, "\x80"},
	} {
		if got := Prefix(c.s, c.n); got != c.want {
			t.Errorf("%s: Prefix(%q, %d) = %q, want %q", c.name, c.s, c.n, got, c.want)
		}
		if got := string(Prefix([]byte(c.s), c.n)); got != c.want {
			t.Errorf("%s: Prefix([]byte(%q), %d) = %q, want %q", c.name, c.s, c.n, got, c.want)
		}
	}
}

func TestSuffix(t *testing.T) {
	for _, c := range []struct {
		name string
		s    string
		n    int
		want string
	}{
		{"ascii", "hello", 3, "llo"},
		{"empty", "", 3, ""},
		{"n zero", "hello", 0, ""},
		{"n negative", "hello", -2, ""},
		{"n is the smallest int", "hello", math.MinInt, ""},
		{"n is len", "héllo", 6, "héllo"},
		{"n above len", "héllo", 99, "héllo"},
		{"n is the largest int", "héllo", math.MaxInt, "héllo"},
		{"2-byte rune at the cut", "éa", 2, "a"},
		{"2-byte rune starts at the cut", "béa", 3, "éa"},
		{"3-byte rune at the cut", "€a", 2, "a"},
		{"3-byte rune, first continuation at the cut", "€a", 3, "a"},
		{"4-byte rune at the cut", "😀a", 3, "a"},
		{"4-byte rune starts at the cut", "b😀a", 5, "😀a"},
		{"last rune longer than n", "😀", 3, ""},
		{"stray continuation bytes", "\x80\x80\x80\x80a", 3, "\x80\x80a"},
		{"incomplete 3-byte sequence", "a\xe2\x82", 1, "\x82"},
		{"garbage before a valid rune", "a\x80é", 3, "\x80é"},
	} {
		if got := Suffix(c.s, c.n); got != c.want {
			t.Errorf("%s: Suffix(%q, %d) = %q, want %q", c.name, c.s, c.n, got, c.want)
		}
		if got := string(Suffix([]byte(c.s), c.n)); got != c.want {
			t.Errorf("%s: Suffix([]byte(%q), %d) = %q, want %q", c.name, c.s, c.n, got, c.want)
		}
	}
}

func TestClip(t *testing.T) {
	for _, c := range []struct {
		s    string
		n    int
		want string
	}{
		{"hello", 5, "hello"},
		{"hello", 9, "hello"},
		{"hello", 4, "hell…"},
		{"hello", 0, "…"},
		{"", 0, ""},
		{"aé", 2, "a…"},
		{"a😀b", 5, "a😀…"},
	} {
		if got := Clip(c.s, c.n, "…"); got != c.want {
			t.Errorf("Clip(%q, %d, \"…\") = %q, want %q", c.s, c.n, got, c.want)
		}
	}
}

func TestRunes(t *testing.T) {
	for _, c := range []struct {
		s    string
		n    int
		want string
	}{
		{"hello", 3, "hel"},
		{"hello", 5, "hello"},
		{"hello", 9, "hello"},
		{"hello", 0, ""},
		{"hello", -1, ""},
		{"", 2, ""},
		{"é€😀x", 3, "é€😀"},
		{"é€😀x", 1, "é"},
		{"a\x80\x80b", 2, "a\x80"}, // an invalid byte counts as one rune
	} {
		if got := Runes(c.s, c.n); got != c.want {
			t.Errorf("Runes(%q, %d) = %q, want %q", c.s, c.n, got, c.want)
		}
	}
}

// TestBytesDoNotAllocate: cutting a byte slice slices it, without copying
// or converting to a string on the heap.
func TestBytesDoNotAllocate(t *testing.T) {
	b := []byte(strings.Repeat("a€😀", 100))
	if n := testing.AllocsPerRun(100, func() {
		for i := range len(b) {
			_ = Prefix(b, i)
			_ = Suffix(b, i)
		}
	}); n != 0 {
		t.Fatalf("%v allocations per run", n)
	}
}

// boundaries returns the cut points of s as a range loop sees them.
func boundaries(s string) map[int]bool {
	b := map[int]bool{len(s): true}
	for i := range s {
		b[i] = true
	}
	return b
}

func FuzzPrefix(f *testing.F) {
	for _, s := range []string{"", "hello", "aé€😀z", "a\x80\x80b", "\xe2\x82", "\xf0\x9f\x98", "\xed\xa0\x80", "\uFFFD"} {
		for _, n := range []int{math.MinInt, -1, 0, 1, 2, 3, 4, 5, 100, math.MaxInt} {
			f.Add(s, n)
		}
	}
	f.Fuzz(func(t *testing.T, s string, n int) {
		p := Prefix(s, n)
		if !strings.HasPrefix(s, p) {
			t.Fatalf("Prefix(%q, %d) = %q: not a prefix", s, n, p)
		}
		if len(p) > max(n, 0) {
			t.Fatalf("Prefix(%q, %d) = %q: longer than n", s, n, p)
		}
		if utf8.ValidString(s) && !utf8.ValidString(p) {
			t.Fatalf("Prefix(%q, %d) = %q: invalid UTF-8 from valid input", s, n, p)
		}
		if string(Prefix([]byte(s), n)) != p {
			t.Fatalf("Prefix on bytes differs from Prefix on the string for (%q, %d)", s, n)
		}
		// Longest: no boundary lies between the cut and n.
		bs := boundaries(s)
		if !bs[len(p)] {
			t.Fatalf("Prefix(%q, %d) = %q: cut inside a rune", s, n, p)
		}
		for k := len(p) + 1; k <= min(n, len(s)); k++ {
			if bs[k] {
				t.Fatalf("Prefix(%q, %d) = %q: could keep %d bytes", s, n, p, k)
			}
		}

		x := Suffix(s, n)
		if !strings.HasSuffix(s, x) || len(x) > max(n, 0) || !bs[len(s)-len(x)] {
			t.Fatalf("Suffix(%q, %d) = %q: not a suffix of at most n bytes starting on a boundary", s, n, x)
		}
		for k := len(s) - len(x) - 1; k >= 0 && len(s)-k <= n; k-- {
			if bs[k] {
				t.Fatalf("Suffix(%q, %d) = %q: could keep %d bytes", s, n, x, len(s)-k)
			}
		}
		if string(Suffix([]byte(s), n)) != x {
			t.Fatalf("Suffix on bytes differs from Suffix on the string for (%q, %d)", s, n)
		}
	})
}
