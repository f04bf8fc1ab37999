package output

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
)

// intentOnly enables only the intent filter, with a low size floor.
func intentOnly() Options { return Options{IntentFilter: true, IntentMinBytes: 100} }

func TestIntentTerms(t *testing.T) {
	cases := map[string][]string{
		"Show me the open bugs of the API": {"open", "bug", "api"},
		"open BUGS, open bugs!":            {"open", "bug"},
		"status of the class":              {"statu", "class"},
		"the a of and":                     nil,
		"issues in v2 for 2026, x y":       {"issue", "v2", "2026"},
		"Überprüfung der Daten":            {"überprüfung", "der", "daten"},
	}
	for in, want := range cases {
		if got := intentTerms(in); !slices.Equal(got, want) {
			t.Errorf("intentTerms(%q) = %q, want %q", in, got, want)
		}
	}
}

// paragraphs builds n filler paragraphs and puts special at the given
// positions.
func paragraphs(n int, special map[int]string) []string {
	var ps []string
	for i := range n {
		if s, ok := special[i]; ok {
			ps = append(ps, s)
			continue
		}
		ps = append(ps, fmt.Sprintf("Section %d\nNothing relevant in this part; the build finished and the docs were regenerated without incident.", i))
	}
	return ps
}

func TestIntentFilterParagraphs(t *testing.T) {
	keep := map[int]string{
		3:  "Bug 12: the login page is OPEN to anyone.",
		17: "Open bugs: 4 remaining in the tracker.",
		30: "Nothing open here but a bug report\nspanning two lines.",
	}
	ps := paragraphs(41, keep)
	raw := strings.Join(ps, "\n\n") + "\n"
	res := Shape(ctx, raw, "open bugs", intentOnly(), nil)
	want := `[intent filter: kept 3 of 41 sections matching "open bugs" (approximate match: at least 1 of open, bugs)]` + "\n" + keep[3] + "\n\n" + keep[17] + "\n\n" + keep[30]
	if res.Text != want || !res.Filtered {
		t.Fatalf("got (Filtered %v):\n%s\nwant:\n%s", res.Filtered, res.Text, want)
	}
}

func TestIntentFilterThirtyPercent(t *testing.T) {
	// Four terms: a section needs two of them (30 % of 4, rounded up).
	special := map[int]string{
		1: "alpha only",
		2: "alpha and bravo",
		3: "charlie, delta and alpha",
	}
	raw := strings.Join(paragraphs(10, special), "\n\n")
	res := Shape(ctx, raw, "alpha bravo charlie delta", intentOnly(), nil)
	if strings.Contains(res.Text, "alpha only") || !strings.Contains(res.Text, "alpha and bravo") || !strings.Contains(res.Text, "charlie, delta and alpha") {
		t.Fatalf("wrong sections kept:\n%s", res.Text)
	}
	if !strings.HasPrefix(res.Text, `[intent filter: kept 2 of 10 sections matching "alpha bravo charlie delta" (approximate match: at least 2 of alpha, bravo, charlie, delta)]`) {
		t.Fatalf("note: %q", strings.SplitN(res.Text, "\n", 2)[0])
	}
}

func TestIntentFilterLines(t *testing.T) {
	var lines []string
	for i := range 60 {
		if i%20 == 5 {
			lines = append(lines, fmt.Sprintf("ERROR disk full on node-%d", i))
		} else {
			lines = append(lines, fmt.Sprintf("INFO heartbeat ok from node-%d", i))
		}
	}
	raw := strings.Join(lines, "\n")
	res := Shape(ctx, raw, "disk errors", intentOnly(), nil)
	want := "[intent filter: kept 3 of 60 lines matching \"disk errors\" (approximate match: at least 1 of disk, errors)]\nERROR disk full on node-5\nERROR disk full on node-25\nERROR disk full on node-45"
	if res.Text != want {
		t.Fatalf("got:\n%s\nwant:\n%s", res.Text, want)
	}
}

func TestIntentFilterJSONArray(t *testing.T) {
	raw := jsonArray(40, issue) // compact: no blank lines, one line
	res := Shape(ctx, raw, "closed issues", intentOnly(), nil)
	// "issue" matches every item's title, so 1 of 2 terms matches all and
	// nothing is dropped; a more specific intent filters.
	if res.Filtered || res.Text != raw {
		t.Fatalf("every item matches, want unchanged")
	}
	res = Shape(ctx, raw, "CLOSED", intentOnly(), nil)
	if !res.Filtered {
		t.Fatalf("not filtered:\n%.300s", res.Text)
	}
	note, body, _ := strings.Cut(res.Text, "\n")
	if note != `[intent filter: kept 20 of 40 items matching "CLOSED"]` {
		t.Fatalf("note %q", note)
	}
	var kept []struct{ ID int }
	if err := json.Unmarshal([]byte(body), &kept); err != nil {
		t.Fatalf("filtered JSON array is not JSON: %v", err)
	}
	for i, k := range kept {
		if k.ID != 2*i+1 { // the closed issues are the odd ones
			t.Fatalf("kept item %d has id %d", i, k.ID)
		}
	}
	if !strings.HasPrefix(body, "[\n  {\n    \"id\": 1,\n    \"title\": \"Issue 1\",") {
		t.Fatalf("kept items are not pretty-printed in key order:\n%.200s", body)
	}
}

func TestIntentFilterNestedJSON(t *testing.T) {
	items := jsonArray(20, func(i int) string {
		state := "open"
		if i%5 != 0 {
			state = "merged"
		}
		return fmt.Sprintf(`{"number":%d,"state":%q,"text":%q}`, i, state, strings.Repeat("z", 50))
	})
	raw := `{"meta":{"repo":"isogate"},"data":{"pulls":` + items + `,"count":20}}`
	res := Shape(ctx, raw, "open", intentOnly(), nil)
	note, body, _ := strings.Cut(res.Text, "\n")
	if note != `[intent filter: kept 4 of 20 items matching "open"]` {
		t.Fatalf("note %q", note)
	}
	var doc struct {
		Meta struct{ Repo string }
		Data struct {
			Pulls []struct{ Number int }
			Count int
		}
	}
	if err := json.Unmarshal([]byte(body), &doc); err != nil {
		t.Fatalf("filtered document is not JSON: %v", err)
	}
	var nums []int
	for _, p := range doc.Data.Pulls {
		nums = append(nums, p.Number)
	}
	if doc.Meta.Repo != "isogate" || doc.Data.Count != 20 || !slices.Equal(nums, []int{0, 5, 10, 15}) {
		t.Fatalf("envelope or kept items wrong: %+v", doc)
	}
	if !strings.HasPrefix(body, "{\n  \"meta\": {") {
		t.Fatalf("key order not kept:\n%.100s", body)
	}
}

func TestIntentFilterNoMatch(t *testing.T) {
	raw := strings.Join(paragraphs(10, nil), "\n\n")
	res := Shape(ctx, raw, "kubernetes quota", intentOnly(), nil)
	want := `[intent filter: no sections matched "kubernetes quota" (approximate match: at least 1 of kubernetes, quota); showing full output]` + "\n" + raw
	if res.Text != want || res.Filtered {
		t.Fatalf("got Filtered %v:\n%.200s", res.Filtered, res.Text)
	}
}

func TestIntentFilterLeavesAlone(t *testing.T) {
	raw := strings.Join(paragraphs(10, map[int]string{2: "open bug"}), "\n\n")
	cases := []struct {
		name, raw, intent string
		opts              Options
	}{
		{"empty intent", raw, "", intentOnly()},
		{"blank intent", raw, "  \n", intentOnly()},
		{"only stop words", raw, "the of and", intentOnly()},
		{"not longer than IntentMinBytes", raw, "open bug", Options{IntentFilter: true, IntentMinBytes: len(raw)}},
		{"default IntentMinBytes", raw, "open bug", Options{IntentFilter: true}},
		{"disabled", raw, "open bug", Options{IntentMinBytes: 100}},
		{"one line", strings.Repeat("open bug ", 100), "open bug", intentOnly()},
		{"JSON object without array", `{"a":"open bug","b":"` + strings.Repeat("x", 500) + `"}`, "open bug", intentOnly()},
		{"every section matches", strings.Repeat("open bug here\n\n", 20), "open bug", intentOnly()},
	}
	for _, c := range cases {
		res := Shape(ctx, c.raw, c.intent, c.opts, nil)
		if res.Text != c.raw || res.Filtered {
			t.Errorf("%s: output changed (Filtered %v): %.120q", c.name, res.Filtered, res.Text)
		}
	}
	if len(raw) > DefaultIntentMinBytes {
		t.Fatalf("test text must be under the default floor")
	}
}

func TestIntentNoteClipsLongIntent(t *testing.T) {
	intent := "open " + strings.Repeat("é", 100) + "\nbug"
	raw := strings.Join(paragraphs(10, map[int]string{1: "open issue"}), "\n\n")
	res := Shape(ctx, raw, intent, intentOnly(), nil)
	note, _, _ := strings.Cut(res.Text, "\n")
	if !strings.HasPrefix(note, `[intent filter: kept 1 of 10 sections matching "open éé`) || !strings.HasSuffix(note, `é…" (approximate match: at least 1 of open, éééééééééééé…, bug)]`) {
		t.Fatalf("note %q", note)
	}
}

// TestIntentFilterKeyValue: a key=value intent keeps the sections that
// have that pair (key, = or :, value; quotes and spaces around the
// separator allowed), not those that only mention the key (owner=bo for
// "owner=dee" met the 30 % rule: 1 of its 2 words), and the note is exact.
func TestIntentFilterKeyValue(t *testing.T) {
	var lines []string
	for i := range 40 {
		owner := []string{"bo", "deepak", "ann", "dee"}[i%4]
		lines = append(lines, fmt.Sprintf("task-%d owner=%s state=%s", i, owner, []string{"open", "closed"}[i%2]))
	}
	raw := strings.Join(lines, "\n")
	res := Shape(ctx, raw, "owner=dee", intentOnly(), nil)
	note, body, _ := strings.Cut(res.Text, "\n")
	if note != `[intent filter: kept 10 of 40 lines matching "owner=dee"]` {
		t.Fatalf("note %q", note)
	}
	for _, l := range strings.Split(body, "\n") {
		if !strings.HasSuffix(l, "owner=dee state=closed") {
			t.Fatalf("kept %q for owner=dee:\n%s", l, body)
		}
	}
	// Pairs combine with words; the words stay approximate, and say so.
	res = Shape(ctx, raw, "closed tasks of owner:ann", intentOnly(), nil)
	if note, _, _ := strings.Cut(res.Text, "\n"); note != `[intent filter: kept 10 of 40 lines matching "closed tasks of owner:ann" (approximate match: owner=ann and at least 1 of closed, tasks)]` {
		t.Fatalf("note %q", note)
	}
	// In JSON items: "owner": "dee" is the pair.
	items := jsonArray(12, func(i int) string {
		return fmt.Sprintf(`{"id":%d,"owner":%q}`, i, []string{"bo", "dee", "deepak"}[i%3])
	})
	res = Shape(ctx, items, "owner=dee", intentOnly(), nil)
	note, body, _ = strings.Cut(res.Text, "\n")
	var kept []struct{ ID int }
	if err := json.Unmarshal([]byte(body), &kept); err != nil || note != `[intent filter: kept 4 of 12 items matching "owner=dee"]` || len(kept) != 4 || kept[0].ID != 1 {
		t.Fatalf("note %q, kept %+v (%v)", note, kept, err)
	}
}
