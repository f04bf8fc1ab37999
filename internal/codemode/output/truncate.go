package output

import (
	"fmt"
	"strings"

	"github.com/isogate/isogate/internal/textcut"
)

// Truncation keeps this share (in tenths) of the byte budget for the head of
// the text; the rest goes to the tail.
const headTenths = 6

// charMarker is the marker inserted when the text is cut mid-line.
func charMarker(omittedBytes int) string {
	return fmt.Sprintf("... [truncated middle — %s omitted] ...", fmtKB(omittedBytes))
}

// lineMarker is the marker inserted when the text is cut on line boundaries.
func lineMarker(omittedLines, omittedBytes, headLines, tailLines int) string {
	return fmt.Sprintf("... [%d lines / %s truncated — showing first %d + last %d lines] ...",
		omittedLines, fmtKB(omittedBytes), headLines, tailLines)
}

// fmtKB formats n bytes as kibibytes with one decimal, e.g. "12.3KB".
func fmtKB(n int) string {
	return fmt.Sprintf("%.1fKB", float64(n)/1024)
}

// countLines counts lines: every '\n' ends one, and a final line without a
// trailing newline counts too.
func countLines(s string) int {
	n := strings.Count(s, "\n")
	if s != "" && s[len(s)-1] != '\n' {
		n++
	}
	return n
}

// truncateText shortens s to at most max bytes by keeping a head (60 % of
// the space left after the marker) and a tail (40 %) and replacing the middle
// with one marker. Cuts fall on line boundaries when that keeps at least half
// of the available space; otherwise they fall on UTF-8 character boundaries
// and the marker is put on a line of its own. The marker's bytes (and its
// newlines) count toward max, so the result is never longer than max — except
// when max cannot even hold the marker, in which case the result is the
// character marker alone, reporting the whole text as omitted. Texts that
// already fit are returned unchanged.
func truncateText(s string, max int) (string, bool) {
	if len(s) <= max {
		return s, false
	}
	total := len(s)
	lines := countLines(s)

	// Reserve room for the longest marker these numbers could produce, so the
	// real marker (whose numbers are never larger) always fits.
	if lines >= 3 {
		avail := max - len(lineMarker(lines, total, lines, lines)) - 1 // + "\n"
		if avail > 0 {
			hb := avail * headTenths / 10
			tb := avail - hb
			head := headLines(s, hb)
			tail := tailLines(s, tb)
			if head != "" && tail != "" && 2*(len(head)+len(tail)) >= avail {
				m, k := countLines(head), countLines(tail)
				marker := lineMarker(lines-m-k, total-len(head)-len(tail), m, k)
				return head + marker + "\n" + tail, true
			}
		}
	}

	avail := max - len(charMarker(total)) - 2 // + "\n" before and after
	if avail <= 0 {
		return charMarker(total), true
	}
	hb := avail * headTenths / 10
	tb := avail - hb
	head, tail := textcut.Prefix(s, hb), textcut.Suffix(s, tb)
	return head + "\n" + charMarker(total-len(head)-len(tail)) + "\n" + tail, true
}

// headLines returns the longest prefix of s made of whole lines (each ending
// in '\n') that is at most budget bytes long.
func headLines(s string, budget int) string {
	if budget >= len(s) {
		budget = len(s)
	}
	return s[:strings.LastIndexByte(s[:budget], '\n')+1]
}

// tailLines returns the longest suffix of s that starts right after a '\n'
// and is at most budget bytes long.
func tailLines(s string, budget int) string {
	p := len(s) - budget
	if p <= 0 {
		return s
	}
	i := strings.IndexByte(s[p-1:], '\n')
	if i < 0 {
		return ""
	}
	return s[p+i:]
}
