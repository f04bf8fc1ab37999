package catalog

import (
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestSplitWords(t *testing.T) {
	for in, want := range map[string][]string{
		"trigger-long-running-operation": {"trigger", "long", "running", "operation"},
		"getTinyImage":                   {"get", "Tiny", "Image"},
		"HTTPServer_v2":                  {"HTTP", "Server", "v2"},
		"has.dots":                       {"has", "dots"},
		"  café au-lait ":                {"café", "au", "lait"},
		"":                               nil,
	} {
		var got []string
		splitWords(in, func(w string) { got = append(got, w) })
		if !slices.Equal(got, want) {
			t.Errorf("splitWords(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestTokenizeDropsStopwords(t *testing.T) {
	var stems []string
	for _, tk := range tokenize("Returns the sum of two Numbers", nil) {
		stems = append(stems, tk.stem)
	}
	if want := []string{"return", "sum", "number"}; !slices.Equal(stems, want) {
		t.Errorf("tokens = %v, want %v", stems, want)
	}
}

func TestOSADistance(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		max  int
		want int
	}{
		{"sum", "sum", 2, 0},
		{"smu", "sum", 2, 1}, // transposition
		{"summ", "sum", 2, 1},
		{"kitten", "sitting", 3, 3},
		{"kitten", "sitting", 2, 3}, // over budget → max+1
		{"ca", "abc", 5, 3},         // OSA, not unrestricted Damerau
		{"", "abc", 5, 3},
		{"日本", "日本語", 1, 1},
	} {
		if got := osaDistance([]rune(tc.a), []rune(tc.b), tc.max); got != tc.want {
			t.Errorf("osa(%q,%q,%d) = %d, want %d", tc.a, tc.b, tc.max, got, tc.want)
		}
	}
}

func TestSummarize(t *testing.T) {
	long := strings.Repeat("word ", 80)
	for in, want := range map[string]string{
		"Returns the sum of two numbers":                           "Returns the sum of two numbers",
		"Returns a tiny MCP logo image.":                           "Returns a tiny MCP logo image.",
		"Compresses a file. Depending upon the selected output...": "Compresses a file.",
		"Uses a format, e.g. JSON. Then more.":                     "Uses a format, e.g. JSON.",
		"Version 1.2 is supported! Rest.":                          "Version 1.2 is supported!",
		"First line\n  continues here.\n\nSecond paragraph.":       "First line continues here.",
		"  ": "",
	} {
		if got := summarize(in); got != want {
			t.Errorf("summarize(%q) = %q, want %q", in, got, want)
		}
	}
	got := summarize(long)
	if n := utf8.RuneCountInString(got); n > maxSummary || !strings.HasSuffix(got, "word…") {
		t.Errorf("long summary (%d runes): %q", n, got)
	}
}
