package catalog

import (
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func hitNames(r SearchResult) []string {
	out := make([]string, len(r.Hits))
	for i, h := range r.Hits {
		out[i] = h.Name
	}
	return out
}

func TestSearchSumFindsGetSumFirst(t *testing.T) {
	c := testCatalog()
	r := c.Search("sum", SearchOptions{})
	if len(r.Hits) == 0 || r.Hits[0].Name != "everything.get-sum" {
		t.Fatalf("hits = %v, want everything.get-sum first", hitNames(r))
	}
	if !slices.Contains(hitNames(r), "calc.add") {
		t.Errorf("hits = %v, want calc.add (description mentions sum) too", hitNames(r))
	}
	h := r.Hits[0]
	if h.Backend != "everything" || h.Tool != "get-sum" {
		t.Errorf("backend/tool = %q/%q", h.Backend, h.Tool)
	}
	if h.Summary != "Returns the sum of two numbers" {
		t.Errorf("summary = %q", h.Summary)
	}
	if want := "await everything.get_sum({ a: 0, b: 0 })"; h.Example != want {
		t.Errorf("example = %q, want %q", h.Example, want)
	}
	if h.Score <= r.Hits[1].Score {
		t.Errorf("scores not decreasing: %v then %v", h.Score, r.Hits[1].Score)
	}
	if !slices.Equal(h.Tags, []string{"demo"}) {
		t.Errorf("tags = %v", h.Tags)
	}
	if len(r.Corrections) != 0 || len(r.Unmatched) != 0 {
		t.Errorf("corrections %v unmatched %v, want none", r.Corrections, r.Unmatched)
	}
}

func TestSearchCorrectsMisspellings(t *testing.T) {
	c := testCatalog()
	for _, tc := range []struct{ query, from, to, first string }{
		{"smu", "smu", "sum", "everything.get-sum"},                         // transposition
		{"summ", "summ", "sum", "everything.get-sum"},                       // extends "sum"; must not become "summarize"
		{"enviroment", "enviroment", "environment", "everything.get-env"},   // deletion, long word
		{"envrionmnet", "envrionmnet", "environment", "everything.get-env"}, // two transpositions
		{"gzi", "gzi", "gzip", "everything.gzip-file-as-resource"},          // short prefix completion
		{"num", "num", "number", "everything.get-sum"},                      // completion beats the edit "sum"
	} {
		r := c.Search(tc.query, SearchOptions{})
		if len(r.Corrections) != 1 || r.Corrections[0] != (Correction{From: tc.from, To: tc.to}) {
			t.Errorf("%q: corrections = %v, want %s→%s", tc.query, r.Corrections, tc.from, tc.to)
		}
		if len(r.Hits) == 0 || r.Hits[0].Name != tc.first {
			t.Errorf("%q: hits = %v, want %s first", tc.query, hitNames(r), tc.first)
		}
		if len(r.Unmatched) != 0 {
			t.Errorf("%q: unmatched = %v", tc.query, r.Unmatched)
		}
	}
}

// TestSearchStemsBeforeCorrecting: a word the stemmer reduces to a
// catalogue word's stem is that word, not a misspelling of it.
func TestSearchStemsBeforeCorrecting(t *testing.T) {
	c := testCatalog()
	r := c.Search("environ", SearchOptions{})
	if len(r.Hits) == 0 || r.Hits[0].Name != "everything.get-env" || len(r.Corrections) != 0 {
		t.Errorf("hits %v corrections %v, want everything.get-env first and no correction", hitNames(r), r.Corrections)
	}
}

func TestSearchDoesNotOvercorrect(t *testing.T) {
	c := testCatalog()
	// Four letters allow one edit only; "sxmx" is two away from "sum".
	for _, q := range []string{"sxmx", "qz", "zzzzzzzz", "weather", strings.Repeat("environment", 10)} {
		r := c.Search(q, SearchOptions{})
		if len(r.Hits) != 0 || len(r.Corrections) != 0 {
			t.Errorf("%q: hits %v corrections %v, want none", q, hitNames(r), r.Corrections)
		}
		if !slices.Equal(r.Unmatched, []string{q}) {
			t.Errorf("%q: unmatched = %v", q, r.Unmatched)
		}
	}
}

func TestSearchReportsUnmatched(t *testing.T) {
	c := testCatalog()
	r := c.Search("sum of xylophones and kazoo", SearchOptions{})
	if len(r.Hits) == 0 || r.Hits[0].Name != "everything.get-sum" {
		t.Fatalf("hits = %v", hitNames(r))
	}
	if !slices.Equal(r.Unmatched, []string{"xylophones", "kazoo"}) {
		t.Errorf("unmatched = %v, want [xylophones kazoo]", r.Unmatched)
	}
	r = c.Search("the of and", SearchOptions{})
	if len(r.Hits) != 0 || len(r.Unmatched) != 3 {
		t.Errorf("stopword query: hits %v unmatched %v", hitNames(r), r.Unmatched)
	}
}

func TestSearchTagFilter(t *testing.T) {
	c := testCatalog()
	r := c.Search("echo", SearchOptions{Tag: "math"})
	if !slices.Equal(hitNames(r), []string{"calc.echo"}) {
		t.Errorf("tag math: %v", hitNames(r))
	}
	r = c.Search("echo", SearchOptions{Tag: "DEMO"})
	if !slices.Equal(hitNames(r), []string{"everything.echo"}) {
		t.Errorf("tag DEMO: %v", hitNames(r))
	}
	// Tool-level tag from _meta.tags.
	r = c.Search("returns", SearchOptions{Tag: "debug"})
	if !slices.Equal(hitNames(r), []string{"everything.get-env"}) {
		t.Errorf("tag debug: %v", hitNames(r))
	}
	// A word present in the catalogue but not under the tag is unmatched.
	r = c.Search("sum echo", SearchOptions{Tag: "files"})
	if len(r.Hits) != 0 || !slices.Equal(r.Unmatched, []string{"sum", "echo"}) {
		t.Errorf("tag files: hits %v unmatched %v", hitNames(r), r.Unmatched)
	}
	r = c.Search("", SearchOptions{Tag: "files"})
	if want := []string{"fs-server.list_directory", "fs-server.read_file", "fs-server.search_files"}; !slices.Equal(hitNames(r), want) {
		t.Errorf("empty query, tag files: %v", hitNames(r))
	}
	if r = c.Search("echo", SearchOptions{Tag: "nope"}); len(r.Hits) != 0 {
		t.Errorf("unknown tag: %v", hitNames(r))
	}
	if got := c.Tags(); !slices.Equal(got, []string{"debug", "demo", "files", "math"}) {
		t.Errorf("Tags() = %v", got)
	}
}

func TestSearchParameterNames(t *testing.T) {
	c := testCatalog()
	for q, want := range map[string]string{
		"recursive":          "fs-server.list_directory",         // only a parameter name
		"exclude":            "fs-server.search_files",           // camelCase parameter excludePatterns
		"include image":      "everything.get-annotated-message", // includeImage
		"long running":       "everything.trigger-long-running-operation",
		"tinyImage":          "everything.get-tiny-image", // camelCase query
		"everything get-sum": "everything.get-sum",
		"steps":              "everything.trigger-long-running-operation",
		"structured content": "everything.get-structured-content",
	} {
		r := c.Search(q, SearchOptions{})
		if len(r.Hits) == 0 || r.Hits[0].Name != want {
			t.Errorf("%q: hits = %v, want %s first", q, hitNames(r), want)
		}
	}
}

func TestSearchFieldWeights(t *testing.T) {
	c := testCatalog()
	// Both echo tools have "echo" in their name; everything.echo's
	// description also says "Echoes", so it ranks first.
	r := c.Search("echo", SearchOptions{})
	if want := []string{"everything.echo", "calc.echo"}; !slices.Equal(hitNames(r), want) {
		t.Errorf("echo: hits = %v, want %v", hitNames(r), want)
	}
	if r.Total != 2 {
		t.Errorf("total = %d", r.Total)
	}
	c = New()
	c.SetBackend("media", nil, []*mcp.Tool{
		{Name: "convert", Description: "Convert an image to another format.",
			InputSchema: obj(nil, map[string]any{"wait": str("Seconds before the timeout")})},
		{Name: "image-resize", Description: "Resize pictures.",
			InputSchema: obj(nil, map[string]any{"timeout": num("")})},
		{Name: "probe", Description: "Probe a file; gives up after a timeout."},
	})
	// A name match outweighs a description match.
	if r := c.Search("image", SearchOptions{}); !slices.Equal(hitNames(r), []string{"media.image-resize", "media.convert"}) {
		t.Errorf("image: hits = %v", hitNames(r))
	}
	// Parameter name > description > parameter description.
	if r := c.Search("timeout", SearchOptions{}); !slices.Equal(hitNames(r), []string{"media.image-resize", "media.probe", "media.convert"}) {
		t.Errorf("timeout: hits = %v", hitNames(r))
	}
}

func TestSearchEmptyQueryListsAll(t *testing.T) {
	c := testCatalog()
	r := c.Search("  ", SearchOptions{Limit: 3})
	if r.Total != c.Count() || len(r.Hits) != 3 {
		t.Fatalf("total %d hits %d, want %d and 3", r.Total, len(r.Hits), c.Count())
	}
	if want := []string{"calc.add", "calc.echo", "calc.summarize-text"}; !slices.Equal(hitNames(r), want) {
		t.Errorf("hits = %v, want %v", hitNames(r), want)
	}
}

func TestSearchLimitAndBrief(t *testing.T) {
	c := testCatalog()
	r := c.Search("returns", SearchOptions{})
	if len(r.Hits) > DefaultSearchLimit {
		t.Errorf("default limit: %d hits", len(r.Hits))
	}
	r = c.Search("returns", SearchOptions{Limit: 2, Brief: true})
	if len(r.Hits) != 2 || r.Total <= 2 {
		t.Fatalf("limit 2: hits %d total %d", len(r.Hits), r.Total)
	}
	for _, h := range r.Hits {
		if h.Example == "" || h.Tags != nil || h.Summary == "" {
			t.Errorf("brief hit %+v", h)
		}
	}
	full := c.Search("returns", SearchOptions{Limit: 50})
	if !slices.Equal(hitNames(r), hitNames(full)[:2]) {
		t.Errorf("top-2 %v differs from head of full ranking %v", hitNames(r), hitNames(full))
	}
}

func TestSearchDeterministicTies(t *testing.T) {
	c := New()
	c.SetBackend("b", nil, []*mcp.Tool{{Name: "zeta", Description: "same words"}, {Name: "alpha", Description: "same words"}})
	r := c.Search("words", SearchOptions{})
	if want := []string{"b.alpha", "b.zeta"}; !slices.Equal(hitNames(r), want) {
		t.Errorf("ties: %v, want %v", hitNames(r), want)
	}
}

func TestSearchResultText(t *testing.T) {
	c := testCatalog()
	txt := c.Search("smu xylophone", SearchOptions{Limit: 1}).Text()
	for _, want := range []string{
		"everything.get-sum — Returns the sum of two numbers",
		"await everything.get_sum({ a: 0, b: 0 })",
		"Corrected: smu → sum",
		"(top 1)",
	} {
		if !strings.Contains(txt, want) {
			t.Errorf("text lacks %q:\n%s", want, txt)
		}
	}
	if strings.Contains(txt, "No match for") { // said only when nothing was found
		t.Errorf("text with hits says a word matched nothing:\n%s", txt)
	}
	if txt := c.Search("qqqq", SearchOptions{}).Text(); !strings.HasPrefix(txt, `No tools match "qqqq"`) {
		t.Errorf("no-hit text:\n%s", txt)
	}
	// Brief hits keep the ready-to-paste call; one hit is "1 tool".
	if txt := c.Search("sum", SearchOptions{Brief: true}).Text(); !strings.Contains(txt, "await everything.get_sum({ a: 0, b: 0 })") {
		t.Errorf("brief text lacks the call:\n%s", txt)
	}
	if txt := c.Search("gzip", SearchOptions{}).Text(); !strings.HasPrefix(txt, `1 tool matches "gzip"`) {
		t.Errorf("one hit:\n%s", txt)
	}
}

// TestSearchAddTwoNumbers is issue 43's query against server-everything's
// tools: get-sum first; trigger-url-elicitation, which shares only the
// word "two" ("Supports two mechanisms"), not among the hits; and no "No
// match for: add" under results that answer the query.
func TestSearchAddTwoNumbers(t *testing.T) {
	c := New()
	c.SetBackend("everything", nil, append(everythingTools(), &mcp.Tool{Name: "trigger-url-elicitation", Title: "Trigger URL Elicitation Tool",
		Description: "Trigger a URL elicitation so the client can direct the user to a browser flow. " +
			"Supports two mechanisms: the request path (elicitation/create, default) which awaits the user's " +
			"response, and the error path (UrlElicitationRequiredError, -32042) which signals the client " +
			"to handle URL elicitation via the error response. Set errorPath=true to use the error path.",
		InputSchema: obj([]string{"url"}, map[string]any{"url": str("The URL the user should open"),
			"message": str("Message shown to the user before opening the URL")})}))
	r := c.Search("add two numbers", SearchOptions{})
	if len(r.Hits) == 0 || r.Hits[0].Name != "everything.get-sum" || slices.Contains(hitNames(r), "everything.trigger-url-elicitation") {
		t.Errorf("hits = %v, want everything.get-sum first and no trigger-url-elicitation", hitNames(r))
	}
	if txt := r.Text(); strings.Contains(txt, "No match for") {
		t.Errorf("a query that found its tool says a word matched nothing:\n%s", txt)
	}
	// A query that found nothing still says which words matched nothing.
	if txt := c.Search("xylophone kazoo", SearchOptions{}).Text(); !strings.Contains(txt, "No match for: xylophone, kazoo") {
		t.Errorf("no-hit text:\n%s", txt)
	}
}

// TestSearchSynonymsBelowExactWords: a query word meets tools that say it
// with a WordNet synonym or hypernym ("person" → users), ranked below a tool
// that uses the word itself, and such a word is not reported unmatched.
func TestSearchSynonymsBelowExactWords(t *testing.T) {
	c := New()
	c.SetBackend("people", nil, []*mcp.Tool{
		{Name: "search_users", Description: "Search for users by login."},
		{Name: "find_person", Description: "Find a person in the address book."},
		{Name: "weather_now", Description: "Current weather for a city."},
	})
	r := c.Search("person", SearchOptions{})
	if want := []string{"people.find_person", "people.search_users"}; !slices.Equal(hitNames(r), want) {
		t.Errorf("person: hits %v, want %v", hitNames(r), want)
	}
	r = c.Search("make a picture", SearchOptions{}) // no tool says either word
	if len(r.Unmatched) != 2 || len(r.Hits) != 0 {
		t.Errorf("make a picture: hits %v unmatched %v", hitNames(r), r.Unmatched)
	}
	c.SetBackend("art", nil, []*mcp.Tool{{Name: "create_image", Description: "Create an image from a prompt."}})
	r = c.Search("make a picture", SearchOptions{})
	if len(r.Hits) == 0 || r.Hits[0].Name != "art.create_image" || len(r.Unmatched) != 0 || len(r.Corrections) != 0 {
		t.Errorf("make a picture: hits %v unmatched %v corrections %v, want art.create_image through synonyms alone",
			hitNames(r), r.Unmatched, r.Corrections)
	}
}

// TestRankIsSearchsRanking: Rank gives Search's tools, order and scores
// without rendering; Hits renders a ranking given from outside (fused),
// in its order, skipping names that are not tools.
func TestRankIsSearchsRanking(t *testing.T) {
	c := testCatalog()
	for _, q := range []string{"sum", "list files recursively", "smu xylophone", ""} {
		s := c.Search(q, SearchOptions{Limit: 5})
		r := c.Rank(q, SearchOptions{Limit: 5})
		var names []string
		for i, tool := range r.Tools {
			names = append(names, tool.Name)
			if got := math.Round(tool.Score*1000) / 1000; got != s.Hits[i].Score {
				t.Errorf("%q: %s scores %v in Rank, %v in Search", q, tool.Name, got, s.Hits[i].Score)
			}
		}
		if !slices.Equal(names, hitNames(s)) || r.Total != s.Total ||
			!slices.Equal(r.Corrections, s.Corrections) || !slices.Equal(r.Unmatched, s.Unmatched) {
			t.Errorf("%q: Rank %v (total %d, %v, %v), Search %v (total %d, %v, %v)", q, names, r.Total, r.Corrections, r.Unmatched,
				hitNames(s), s.Total, s.Corrections, s.Unmatched)
		}
	}
	hits := c.Hits([]Ranked{{Name: "everything.echo", Score: 2}, {Name: "no.such"}, {Name: "everything.get-sum", Score: 1.5}}, true)
	if len(hits) != 2 || hits[0].Name != "everything.echo" || hits[1].Name != "everything.get-sum" || hits[1].Score != 1.5 ||
		hits[1].Example != "await everything.get_sum({ a: 0, b: 0 })" || hits[1].Tags != nil {
		t.Errorf("Hits = %+v", hits)
	}
}

// TestSearchNoMatchEscapesControls: a query of control characters comes back
// in the "No match for:" line escaped as in the header, never raw.
func TestSearchNoMatchEscapesControls(t *testing.T) {
	c := testCatalog()
	for _, q := range []string{"\u0000\u0001", "\u001b \u007f", "\"\\"} {
		txt := c.Search(q, SearchOptions{}).Text()
		for _, r := range txt {
			if r != '\n' && (r < 0x20 || r == 0x7f) {
				t.Errorf("query %q: text has raw control %U:\n%q", q, r, txt)
			}
		}
		if !strings.Contains(txt, "No match for: ") {
			t.Errorf("query %q: no 'No match for' line:\n%q", q, txt)
		}
	}
	if txt := c.Search("\u0000\u0001", SearchOptions{}).Text(); !strings.Contains(txt, `No match for: \x00\x01`) {
		t.Errorf("escaped form missing:\n%q", txt)
	}
}
