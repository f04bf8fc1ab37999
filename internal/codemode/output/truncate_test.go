package output

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"
)

var (
	lineMarkerRE = regexp.MustCompile(`^\.\.\. \[(\d+) lines / (\d+\.\d)KB truncated — showing first (\d+) \+ last (\d+) lines\] \.\.\.$`)
	charMarkerRE = regexp.MustCompile(`\n\.\.\. \[truncated middle — (\d+\.\d)KB omitted\] \.\.\.\n`)
)

func numberedLines(n int, format string) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, format, i)
		b.WriteByte('\n')
	}
	return b.String()
}

func TestTruncateLeavesShortTextAlone(t *testing.T) {
	for _, s := range []string{"", "short", strings.Repeat("x", 100)} {
		got, cut := truncateText(s, 100)
		if got != s || cut {
			t.Errorf("truncateText(%d bytes, 100) = %d bytes, %v; want unchanged", len(s), len(got), cut)
		}
	}
}

func TestTruncateLineMarkerGolden(t *testing.T) {
	s := numberedLines(100, "line %03d")
	got, cut := truncateText(s, 300)
	// 100 lines of 9 bytes; the reserved marker ("... [100 lines / 0.9KB
	// truncated — showing first 100 + last 100 lines] ...") is 76 bytes, so
	// 300-76-1 = 223 bytes remain: 133 for the head (14 lines) and 90 for
	// the tail (10 lines).
	want := numberedLines(14, "line %03d") +
		"... [76 lines / 0.7KB truncated — showing first 14 + last 10 lines] ...\n" +
		numberedLines(100, "line %03d")[90*9:]
	if !cut || got != want {
		t.Fatalf("got (cut=%v):\n%s\nwant:\n%s", cut, got, want)
	}
}

func TestTruncateLineMode(t *testing.T) {
	s := numberedLines(5000, "row %05d: some payload text")
	const max = 20000
	got, cut := truncateText(s, max)
	if !cut || len(got) > max {
		t.Fatalf("cut=%v len=%d, want cut and len <= %d", cut, len(got), max)
	}
	lines := strings.Split(got, "\n")
	mi := -1
	for i, l := range lines {
		if strings.HasPrefix(l, "... [") {
			if mi >= 0 {
				t.Fatalf("more than one marker line")
			}
			mi = i
		}
	}
	if mi < 0 {
		t.Fatalf("no marker in output")
	}
	m := lineMarkerRE.FindStringSubmatch(lines[mi])
	if m == nil {
		t.Fatalf("marker %q does not match the line-marker format", lines[mi])
	}
	head := strings.Join(lines[:mi], "\n") + "\n"
	tail := strings.Join(lines[mi+1:], "\n")
	if !strings.HasPrefix(s, head) || !strings.HasSuffix(s, tail) {
		t.Fatalf("head/tail are not whole-line prefix/suffix of the input")
	}
	var omitted, kb, first, last string = m[1], m[2], m[3], m[4]
	if want := fmt.Sprint(countLines(head)); first != want {
		t.Errorf("marker says first %s lines, head has %s", first, want)
	}
	if want := fmt.Sprint(countLines(tail)); last != want {
		t.Errorf("marker says last %s lines, tail has %s", last, want)
	}
	if want := fmt.Sprint(5000 - countLines(head) - countLines(tail)); omitted != want {
		t.Errorf("marker says %s lines omitted, want %s", omitted, want)
	}
	if want := fmt.Sprintf("%.1f", float64(len(s)-len(head)-len(tail))/1024); kb != want {
		t.Errorf("marker says %sKB omitted, want %s", kb, want)
	}
	// Head gets 60 % and tail 40 % of the space left for text (within one
	// line of rounding each).
	avail := max - len(lines[mi]) - 1
	const lineLen = len("row 00000: some payload text\n")
	if h := len(head); h > avail*6/10 || h < avail*6/10-2*lineLen {
		t.Errorf("head %d bytes, want about 60%% of %d", h, avail)
	}
	if tl := len(tail); tl > avail*4/10+1 || tl < avail*4/10-2*lineLen {
		t.Errorf("tail %d bytes, want about 40%% of %d", tl, avail)
	}
}

func TestTruncateCharMarkerGolden(t *testing.T) {
	s := strings.Repeat("a", 6000) + strings.Repeat("b", 4000)
	got, cut := truncateText(s, 100)
	// The marker is 44 bytes, plus two newlines: 54 bytes remain, 32 for the
	// head and 22 for the tail; 9946 bytes (9.7KB) are omitted.
	want := strings.Repeat("a", 32) + "\n... [truncated middle — 9.7KB omitted] ...\n" + strings.Repeat("b", 22)
	if !cut || got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
}

func TestTruncateCharMode(t *testing.T) {
	s := strings.Repeat("0123456789", 10000) // one line, 100000 bytes
	const max = 10000
	got, cut := truncateText(s, max)
	if !cut || len(got) > max || len(got) < max-20 {
		t.Fatalf("cut=%v len=%d, want cut and len in [%d, %d]", cut, len(got), max-20, max)
	}
	loc := charMarkerRE.FindAllStringSubmatchIndex(got, -1)
	if len(loc) != 1 {
		t.Fatalf("want exactly one char marker, found %d in %q…", len(loc), got[:80])
	}
	head, tail := got[:loc[0][0]], got[loc[0][1]:]
	if !strings.HasPrefix(s, head) || !strings.HasSuffix(s, tail) {
		t.Fatalf("head/tail are not a prefix/suffix of the input")
	}
	if kb := got[loc[0][2]:loc[0][3]]; kb != fmt.Sprintf("%.1f", float64(len(s)-len(head)-len(tail))/1024) {
		t.Errorf("marker reports %sKB omitted, want %d bytes", kb, len(s)-len(head)-len(tail))
	}
	share := float64(len(head)) / float64(len(head)+len(tail))
	if share < 0.599 || share > 0.601 {
		t.Errorf("head share %.4f, want 0.6", share)
	}
}

func TestTruncateFallsBackToCharsWhenLinesAreHuge(t *testing.T) {
	// Three lines, each larger than the whole budget: cutting on lines would
	// leave nothing, so the text is cut mid-line.
	s := strings.Repeat("x", 5000) + "\n" + strings.Repeat("y", 5000) + "\n" + strings.Repeat("z", 5000)
	got, _ := truncateText(s, 1000)
	if !charMarkerRE.MatchString(got) || strings.Contains(got, "lines /") {
		t.Fatalf("want a char marker, got %q", got)
	}
	if len(got) > 1000 {
		t.Fatalf("len %d > 1000", len(got))
	}
}

func TestTruncateUTF8AtEveryCut(t *testing.T) {
	for _, r := range []string{"é", "語", "😀"} {
		// One line (char mode) and many short lines (line mode, lines of
		// varying byte length).
		texts := []string{
			strings.Repeat(r, 3000),
			numberedLines(400, "%d "+strings.Repeat(r, 7)),
			"a" + strings.Repeat(r, 3000), // shifts the rune grid by one byte
			"ab" + strings.Repeat(r, 3000),
		}
		for ti, s := range texts {
			for max := 100; max < 200; max++ {
				got, cut := truncateText(s, max)
				if !cut {
					t.Fatalf("rune %q text %d max %d: not truncated", r, ti, max)
				}
				if !utf8.ValidString(got) {
					t.Fatalf("rune %q text %d max %d: invalid UTF-8 %q", r, ti, max, got)
				}
				if len(got) > max {
					t.Fatalf("rune %q text %d max %d: len %d", r, ti, max, len(got))
				}
			}
		}
	}
}

func TestTruncateAbsurdlySmallMax(t *testing.T) {
	s := strings.Repeat("z", 5000)
	for _, max := range []int{0, 1, 10, 40} {
		got, cut := truncateText(s, max)
		if want := "... [truncated middle — 4.9KB omitted] ..."; got != want || !cut {
			t.Errorf("max %d: got %q, want the bare marker %q", max, got, want)
		}
	}
}

// FuzzTruncate checks that truncation never produces invalid UTF-8 from
// valid input, never exceeds the budget when the budget can hold a marker,
// and only ever keeps a prefix and a suffix of the input.
func FuzzTruncate(f *testing.F) {
	f.Add("hello\nworld\n", 3)
	f.Add(strings.Repeat("日本語\n", 200), 90)
	f.Add(strings.Repeat("😀", 500), 120)
	f.Add(numberedLines(300, "l%d"), 200)
	f.Fuzz(func(t *testing.T, s string, max int) {
		if max < 0 {
			max = -max
		}
		if max < 0 { // MinInt
			max = 0
		}
		max %= len(s) + 200
		got, cut := truncateText(s, max)
		if len(s) <= max {
			if cut || got != s {
				t.Fatalf("text fits but was changed")
			}
			return
		}
		if !cut {
			t.Fatalf("text does not fit but was not cut")
		}
		if utf8.ValidString(s) && !utf8.ValidString(got) {
			t.Fatalf("invalid UTF-8 output from valid input: %q", got)
		}
		if bare := charMarker(len(s)); max < len(bare)+3 {
			if len(got) > max && got != bare {
				t.Fatalf("tiny max %d: got %q, want <= max or the bare marker", max, got)
			}
			return
		}
		if len(got) > max {
			t.Fatalf("len %d > max %d", len(got), max)
		}
		// Exactly one marker, with a prefix of s before and a suffix after.
		i := strings.Index(got, "... [")
		j := strings.LastIndex(got, "] ...")
		if i < 0 || j < i {
			t.Fatalf("no marker in %q", got)
		}
		head, tail := strings.TrimSuffix(got[:i], "\n"), strings.TrimPrefix(got[j+len("] ..."):], "\n")
		if !strings.HasPrefix(s, head) || !strings.HasSuffix(s, tail) {
			t.Fatalf("output is not prefix + marker + suffix of the input")
		}
	})
}
