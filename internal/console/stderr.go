package console

import (
	"regexp"
	"strings"
)

// stderrLine is a backend's stderr line as the overview shows it: a
// notice (what a server says while it works) or an error, with a note
// when the line is known to be harmless.
type stderrLine struct {
	Text string
	// Level is "notice" or "error".
	Level string
	// Note explains a line that looks like a failure but is not one.
	Note string
}

// harmless are stderr lines that read as failures but are expected under
// isogate, each with why.
var harmless = []struct {
	match func(string) bool
	note  string
}{
	{func(l string) bool { return strings.Contains(l, "roots/list") || strings.Contains(l, "request roots") },
		"harmless: the server asked for the client's roots while no client call was in flight (isogate refuses then); it keeps its configured directories"},
}

// failure marks a line that reports a failure.
var failure = regexp.MustCompile(`(?i)\b(error|err!|fatal|panic|exception|traceback|unhandled|failed|cannot|refused|denied|killed|segmentation)\b`)

// classify marks each stderr line notice or error.
func classify(lines []string) []stderrLine {
	out := make([]stderrLine, len(lines))
	for i, l := range lines {
		out[i] = stderrLine{Text: l, Level: "notice"}
		for _, h := range harmless {
			if h.match(l) {
				out[i].Note = h.note
				break
			}
		}
		if out[i].Note == "" && failure.MatchString(l) {
			out[i].Level = "error"
		}
	}
	return out
}
