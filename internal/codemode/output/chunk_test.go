package output

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/isogate/isogate/internal/resultstore"
)

// chunkOnly enables only the auto-chunk stage.
func chunkOnly() Options { return Options{AutoChunk: true} }

// issue is one item of a uniform array, with keys in a fixed order.
func issue(i int) string {
	state := []string{"open", "closed"}[i%2]
	return fmt.Sprintf(`{"id":%d,"title":"Issue %d","state":%q,"body":%q}`, i, i, state, strings.Repeat("lorem ipsum ", 20))
}

func jsonArray(n int, item func(int) string) string {
	parts := make([]string, n)
	for i := range n {
		parts[i] = item(i)
	}
	return "[" + strings.Join(parts, ",") + "]"
}

func fetchLine(id, example string) string {
	return fmt.Sprintf(`Full result: isogate://result/%s (or isogate://result/%s/<json-path> for a part, e.g. isogate://result/%s/%s); read it as a resource or with read_result {"uri": "isogate://result/%s"}`, id, id, id, example, id)
}

var ctx = context.Background()

// newStore returns an in-memory store holding up to n bytes for one owner.
func newStore(n int) *resultstore.Memory {
	return resultstore.NewMemory(resultstore.Limits{TTL: time.Hour, MaxBytes: n, OwnerBytes: n})
}

// getPath reads the part at path of the stored result id.
func getPath(s resultstore.Store, owner, id, path string) (string, error) {
	data, err := s.Get(ctx, owner, id)
	if err != nil {
		return "", err
	}
	part, err := resultstore.Lookup(data, path)
	return string(part), err
}

func lastLine(s string) string { return s[strings.LastIndexByte(s, '\n')+1:] }

func TestChunkUniformArray(t *testing.T) {
	raw := jsonArray(60, issue)
	store := newStore(1 << 20)
	res := Shape(ctx, raw, "", chunkOnly(), store)
	if !res.Chunked || !regexp.MustCompile(`^[0-9a-f]{32}$`).MatchString(res.StoredID) {
		t.Fatalf("Chunked %v StoredID %q", res.Chunked, res.StoredID)
	}
	text := res.Text
	wantHead := fmt.Sprintf("[JSON summary (%s): array of 60 objects]\nKeys: id, title, state, body\nFirst 5 items:\n[\n", fmtKB(len(raw)))
	if !strings.HasPrefix(text, wantHead) {
		t.Fatalf("summary starts %q, want %q", text[:min(len(text), 200)], wantHead)
	}
	lines := strings.Split(text, "\n")
	for i := range 5 {
		var item struct{ ID int }
		if err := json.Unmarshal([]byte(strings.TrimSuffix(lines[4+i], ",")), &item); err != nil || item.ID != i {
			t.Fatalf("preview line %d = %q (err %v), want item %d", i, lines[4+i], err, i)
		}
	}
	if lines[9] != "]" {
		t.Fatalf("preview not closed: %q", lines[9])
	}
	// The preview block is itself valid JSON.
	var preview []map[string]any
	if err := json.Unmarshal([]byte(strings.Join(lines[3:10], "\n")), &preview); err != nil || len(preview) != 5 {
		t.Fatalf("preview is not a JSON array of 5 items: %v", err)
	}
	if want := "Remaining 55 items (id): 5-59"; lines[10] != want {
		t.Fatalf("identities line = %q, want %q", lines[10], want)
	}
	if got, want := lastLine(text), fetchLine(res.StoredID, "5"); got != want {
		t.Fatalf("last line = %q, want %q", got, want)
	}
	if got, err := store.Get(ctx, "", res.StoredID); err != nil || string(got) != raw {
		t.Fatalf("stored result is not the raw output")
	}
	part, err := getPath(store, "", res.StoredID, "5/title")
	if err != nil || part != `"Issue 5"` {
		t.Fatalf("GetPath(5/title) = %q, %v", part, err)
	}
	if len(text) > len(raw)/3 {
		t.Fatalf("summary is %d bytes for %d bytes of input", len(text), len(raw))
	}
}

func TestChunkIdentities(t *testing.T) {
	pad := strings.Repeat("x", 400)
	cases := []struct {
		name string
		item func(i int) string
		want string // the line after the preview
	}{
		{"name", func(i int) string { return fmt.Sprintf(`{"name":"n%d","v":%q}`, i, pad) },
			`Remaining 25 items (name): "n5", "n6", "n7"`},
		{"title", func(i int) string { return fmt.Sprintf(`{"title":"t%d","v":%q}`, i, pad) },
			`Remaining 25 items (title): "t5", "t6"`},
		{"slug", func(i int) string { return fmt.Sprintf(`{"slug":"s-%d","v":%q}`, i, pad) },
			`Remaining 25 items (slug): "s-5"`},
		{"key", func(i int) string { return fmt.Sprintf(`{"key":"K%d","v":%q}`, i, pad) },
			`Remaining 25 items (key): "K5"`},
		{"label", func(i int) string { return fmt.Sprintf(`{"label":"L%d","v":%q}`, i, pad) },
			`Remaining 25 items (label): "L5"`},
		{"id beats name, any case", func(i int) string { return fmt.Sprintf(`{"name":"n%d","ID":%d,"v":%q}`, i, 100+i, pad) },
			"Remaining 25 items (ID): 105-129\n"},
		{"null or object id skipped", func(i int) string { return fmt.Sprintf(`{"id":null,"slug":{"x":1},"title":"t%d","v":%q}`, i, pad) },
			`Remaining 25 items (title): "t5"`},
		{"mixed fields", func(i int) string {
			if i%2 == 0 {
				return fmt.Sprintf(`{"id":%d,"v":%q}`, i, pad)
			}
			return fmt.Sprintf(`{"name":"n%d","v":%q}`, i, pad)
		}, `Remaining 25 items (name/id): name="n5", id=6, name="n7"`},
		{"some without", func(i int) string {
			if i%2 == 0 {
				return fmt.Sprintf(`{"id":%d,"v":%q}`, i, pad)
			}
			return fmt.Sprintf(`{"v":%q}`, pad)
		}, `Remaining 25 items (id): #5, 6, #7, 8`},
		{"none", func(i int) string { return fmt.Sprintf(`{"value":%d,"v":%q}`, i, pad) },
			"Remaining 25 items not shown.\n"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			raw := jsonArray(30, c.item)
			res := Shape(ctx, raw, "", chunkOnly(), newStore(1<<20))
			if !res.Chunked {
				t.Fatalf("not chunked")
			}
			i := strings.Index(res.Text, "\n]\n")
			if i < 0 {
				t.Fatalf("no preview in %q", res.Text)
			}
			if after := res.Text[i+3:]; !strings.HasPrefix(after, c.want) {
				t.Fatalf("after preview: %q\nwant prefix: %q", after[:min(len(after), 120)], c.want)
			}
		})
	}
}

// Runs of consecutive integers are written as ranges; anything else, and
// runs shorter than three, item by item.
func TestIdentityRanges(t *testing.T) {
	cases := []struct {
		tokens []string
		want   string
	}{
		{[]string{"1", "2", "3", "4", "7", "8", "10", "11", "12"}, "1-4, 7, 8, 10-12"},
		{[]string{"#5", "#6", "#7", "8", "9", "10"}, "#5-7, 8-10"},
		{[]string{"1", "01", "2", "-1", "0", "1", "x"}, "1, 01, 2, -1, 0, 1, x"},
		{[]string{"9", "8", "7"}, "9, 8, 7"},
		{[]string{"9223372036854775806", "9223372036854775807", "9223372036854775808"}, "9223372036854775806, 9223372036854775807, 9223372036854775808"},
	}
	for _, c := range cases {
		var parts []string
		for i := 0; i < len(c.tokens); {
			s, n := runAt(c.tokens, i)
			parts = append(parts, s)
			i += n
		}
		if got := strings.Join(parts, ", "); got != c.want {
			t.Errorf("%v: %q, want %q", c.tokens, got, c.want)
		}
	}
}

func TestChunkIdentityListIsBounded(t *testing.T) {
	raw := jsonArray(5000, func(i int) string { return fmt.Sprintf(`{"id":"item-%06d","n":%d}`, i, i) })
	o := chunkOnly()
	res := Shape(ctx, raw, "", o, newStore(1<<22))
	if !regexp.MustCompile(`, … \(\+\d+ more\)\n`).MatchString(res.Text) {
		t.Fatalf("long identity list not cut off")
	}
	if len(res.Text) > DefaultChunkThreshold {
		t.Fatalf("summary %d bytes, want under the chunk threshold", len(res.Text))
	}
}

func TestChunkNestedArray(t *testing.T) {
	items := jsonArray(40, issue)
	cases := []struct {
		name, raw, at, other, example string
	}{
		{"results/items",
			`{"results":{"items":` + items + `,"total":40},"status":"ok"}`,
			"results > items", "Other fields:\n  status = \"ok\"\n  results > total = 40\n", "results/items/5"},
		{"data/items",
			`{"data":{"items":` + items + `}}`,
			"data > items", "", "data/items/5"},
		{"results",
			`{"results":` + items + `,"next":null}`,
			"results", "Other fields:\n  next = null\n", "results/5"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			store := newStore(1 << 20)
			res := Shape(ctx, c.raw, "", chunkOnly(), store)
			want := fmt.Sprintf("[JSON summary (%s): array of 40 objects at %s]\n%sKeys: id, title, state, body\n", fmtKB(len(c.raw)), c.at, c.other)
			if !strings.HasPrefix(res.Text, want) {
				t.Fatalf("got:\n%s\nwant prefix:\n%s", res.Text[:min(len(res.Text), 300)], want)
			}
			if !strings.Contains(res.Text, "Remaining 35 items (id): 5-39\n") {
				t.Fatalf("no identities for the nested array")
			}
			if got := lastLine(res.Text); got != fetchLine(res.StoredID, c.example) {
				t.Fatalf("last line %q", got)
			}
			part, err := getPath(store, "", res.StoredID, c.example)
			if err != nil || !strings.Contains(part, `"id": 5,`) {
				t.Fatalf("GetPath(%s) = %q, %v", c.example, part, err)
			}
		})
	}
}

func TestChunkKeyPathSummary(t *testing.T) {
	// Two big values, so neither is "the" array: a key-path summary.
	items := jsonArray(5, func(i int) string {
		return fmt.Sprintf(`{"id":%d,"text":%q,"tags":["a","b"]%s}`, i, strings.Repeat("t", 1000), map[bool]string{true: `,"extra":true`}[i < 2])
	})
	raw := `{"results":{"items":` + items + `},"meta":{"total":5,"page":1},"logs":[` +
		strings.Repeat(`"`+strings.Repeat("l", 500)+`",`, 11) + `{"odd":1}]}`
	store := newStore(1 << 20)
	res := Shape(ctx, raw, "", chunkOnly(), store)
	if !res.Chunked {
		t.Fatalf("not chunked")
	}
	lines := strings.Split(res.Text, "\n")
	want := []string{
		fmt.Sprintf("[JSON summary (%s): object with 3 keys; key paths with types and sizes]", fmtKB(len(raw))),
		"results (object, 1 key, 5.1KB)",
		"results > items > [0-4] (object, 5 items, 5.1KB)",
		"results > items > [0-4] > id (number)",
		"results > items > [0-4] > text (string)",
		"results > items > [0-4] > tags > [*] (string, 2 items each)",
		"results > items > [0-4] > extra (boolean, in 2 of 5)",
		"meta (object, 2 keys, 20 B)",
		"meta > total (number) = 5",
		"meta > page (number) = 1",
		"logs > [0-11] (object|string, 12 items, 5.4KB)",
		"logs > [0-11] > odd (number) = 1",
		fetchLine(res.StoredID, "results/items/0"),
	}
	if strings.Join(lines, "\n") != strings.Join(want, "\n") {
		t.Fatalf("got:\n%s\nwant:\n%s", res.Text, strings.Join(want, "\n"))
	}
}

func TestChunkHeterogeneousArray(t *testing.T) {
	raw := jsonArray(20, func(i int) string {
		return fmt.Sprintf(`{"k%d":%q}`, i, strings.Repeat("v", 600)) // no shared keys
	})
	res := Shape(ctx, raw, "", chunkOnly(), newStore(1<<20))
	if !strings.HasPrefix(res.Text, fmt.Sprintf("[JSON summary (%s): array of 20 items; key paths", fmtKB(len(raw)))) {
		t.Fatalf("heterogeneous array not summarised by key paths:\n%s", res.Text)
	}
	if !strings.Contains(res.Text, "\n[0-19] (object, 20 items, ") || !strings.Contains(res.Text, "\n[0-19] > k3 (string, in 1 of 20) = \"vvvv") {
		t.Fatalf("missing key-path lines:\n%s", res.Text)
	}
}

func TestChunkScalarArray(t *testing.T) {
	raw := jsonArray(3000, func(i int) string { return fmt.Sprint(i * 7) })
	res := Shape(ctx, raw, "", chunkOnly(), newStore(1<<20))
	want := fmt.Sprintf("[JSON summary (%s): array of 3000 numbers]\nFirst 5 items:\n[\n0,\n7,\n14,\n21,\n28\n]\nRemaining 2995 items not shown.\n", fmtKB(len(raw)))
	if !strings.HasPrefix(res.Text, want) {
		t.Fatalf("got:\n%s\nwant prefix:\n%s", res.Text, want)
	}
}

func TestChunkPreviewOptionsAndClipping(t *testing.T) {
	raw := jsonArray(10, func(i int) string { return fmt.Sprintf(`{"id":%d,"blob":%q}`, i, strings.Repeat("é", 3000)) })
	o := chunkOnly()
	o.ChunkPreviewItems = 3
	res := Shape(ctx, raw, "", o, newStore(1<<20))
	if !strings.Contains(res.Text, "\nFirst 3 items:\n") || !strings.Contains(res.Text, "\nRemaining 7 items (id): 3-9\n") {
		t.Fatalf("ChunkPreviewItems not honoured:\n%s", res.Text)
	}
	if !strings.Contains(res.Text, `…(+5700 bytes)"}`) {
		t.Fatalf("long strings in the preview are not clipped:\n%s", res.Text)
	}
	if len(res.Text) > 2000 {
		t.Fatalf("preview too large: %d bytes", len(res.Text))
	}
}

func TestChunkKeyPathLimits(t *testing.T) {
	// Deep nesting stops at the depth limit; a wide object stops at the
	// line limit.
	deep := strings.Repeat(`{"d":`, 12) + `"` + strings.Repeat("x", 11000) + `"` + strings.Repeat("}", 12)
	res := Shape(ctx, `{"a":`+deep+`,"b":`+deep+`}`, "", chunkOnly(), newStore(1<<20))
	for _, l := range strings.Split(res.Text, "\n") {
		if strings.Count(l, " > ") >= maxKeyPathDepth+1 {
			t.Fatalf("line deeper than the limit: %q", l)
		}
	}
	if !strings.Contains(res.Text, "a > d > d > d > d > d (object, 1 key, 10.8KB) …\n") {
		t.Fatalf("depth-limited node not marked:\n%s", res.Text)
	}

	var fields []string
	for i := range 1000 {
		fields = append(fields, fmt.Sprintf(`"field%04d":%d`, i, i))
	}
	res = Shape(ctx, "{"+strings.Join(fields, ",")+"}", "", chunkOnly(), newStore(1<<20))
	if n := strings.Count(res.Text, "\n"); n > maxSummaryLines+3 {
		t.Fatalf("summary has %d lines", n)
	}
	if !strings.Contains(res.Text, "\n… (51 more key paths)\n") {
		t.Fatalf("line cap not reported:\n…%s", res.Text[len(res.Text)-300:])
	}
}

func TestChunkSkips(t *testing.T) {
	big := strings.Repeat("not json at all\n", 1000)
	cases := map[string]string{
		"text":            big,
		"json string":     `"` + strings.Repeat("s", 20000) + `"`,
		"invalid json":    "[" + strings.Repeat(`1,`, 8000),
		"trailing data":   jsonArray(60, issue) + " trailing",
		"below threshold": jsonArray(10, issue),
	}
	for name, raw := range cases {
		store := newStore(1 << 20)
		res := Shape(ctx, raw, "", chunkOnly(), store)
		if res.Chunked || res.Text != raw || res.StoredID != "" || store.Len() != 0 {
			t.Errorf("%s: chunked %v, stored %d; want untouched", name, res.Chunked, store.Len())
		}
	}
	// Without a store nothing is summarised: the full result would be lost.
	raw := jsonArray(60, issue)
	if res := Shape(ctx, raw, "", chunkOnly(), nil); res.Chunked || res.Text != raw {
		t.Errorf("nil store: chunked %v", res.Chunked)
	}
	if res := Shape(ctx, raw, "", DefaultOptions(), nil); res.Chunked || res.Text != raw {
		t.Errorf("nil store with defaults: chunked %v", res.Chunked)
	}
}

func TestChunkNotWhenSummaryIsNoSmaller(t *testing.T) {
	// Long keys nested deep: every key-path line repeats them, so the
	// summary would be longer than the JSON.
	long := func(c string) string { return strings.Repeat(c, 100) }
	var leaves []string
	for i := range 150 {
		leaves = append(leaves, fmt.Sprintf(`"k%d":%d`, i, i))
	}
	raw := fmt.Sprintf(`{%q:{%q:{%q:{%s}}}}`, long("a"), long("b"), long("c"), strings.Join(leaves, ","))
	o := chunkOnly()
	o.ChunkThreshold = 1000
	store := newStore(1 << 20)
	res := Shape(ctx, raw, "", o, store)
	if res.Chunked || res.Text != raw || store.Len() != 0 {
		t.Fatalf("chunked into a longer summary: %d bytes for %d", len(res.Text), len(raw))
	}
}

func TestChunkStoreTooSmall(t *testing.T) {
	raw := jsonArray(60, issue)
	store := newStore(1000)
	res := Shape(ctx, raw, "", chunkOnly(), store)
	if !res.Chunked || res.StoredID != "" || store.Len() != 0 {
		t.Fatalf("Chunked %v StoredID %q Len %d", res.Chunked, res.StoredID, store.Len())
	}
	if got := lastLine(res.Text); !strings.HasPrefix(got, "Full result could not be kept: result larger than the result store's per-owner share") {
		t.Fatalf("last line %q does not say why the result was not kept", got)
	}
	if strings.Contains(res.Text, "isogate://") {
		t.Fatalf("summary offers a URI for a result that was not stored")
	}
}

func TestChunkStoresUnderOwner(t *testing.T) {
	o := chunkOnly()
	o.Owner = "session-a"
	store := newStore(1 << 20)
	res := Shape(ctx, jsonArray(60, issue), "", o, store)
	if _, err := store.Get(ctx, "session-a", res.StoredID); err != nil {
		t.Fatalf("result not stored under the owner")
	}
	if _, err := store.Get(ctx, "session-b", res.StoredID); err == nil {
		t.Fatalf("another owner can read the result")
	}
}

func TestUniformObjects(t *testing.T) {
	parse := func(s string) *jval {
		v, ok := parseJSON(s, false)
		if !ok {
			t.Fatalf("bad JSON %s", s)
		}
		return v
	}
	cases := map[string]bool{
		`[{"a":1,"b":2},{"a":3,"b":4}]`:                     true,
		`[{"a":1,"b":2,"c":3},{"a":3,"b":4},{"a":1,"c":2}]`: true,
		`[{"a":1},{"b":2},{"c":3},{"d":4}]`:                 false,
		`[{"a":1,"b":2},[1,2]]`:                             false,
		`[]`:                                                false,
		`[{"a":1,"b":1},{"a":1,"b":1},{"x":1,"y":1,"z":1,"w":1}]`: false,
	}
	for in, want := range cases {
		if got := uniformObjects(parse(in)); got != want {
			t.Errorf("uniformObjects(%s) = %v, want %v", in, got, want)
		}
	}
}

// intToken accepts exactly the tokens whose digits are the canonical
// decimal form of a non-negative int64 (what strconv.FormatInt writes),
// after an optional "#".
func TestIntTokenIsCanonicalDecimal(t *testing.T) {
	reference := func(tok string) (string, int64, bool) {
		prefix, digits := "", tok
		if strings.HasPrefix(tok, "#") {
			prefix, digits = "#", tok[1:]
		}
		v, err := strconv.ParseInt(digits, 10, 64)
		if err != nil || v < 0 || strconv.FormatInt(v, 10) != digits {
			return "", 0, false
		}
		return prefix, v, true
	}
	for _, tok := range []string{"0", "7", "#7", "10", "007", "#01", "-1", "-0", "+1", "", "#", "1.5", "1e3", " 1",
		"9223372036854775807", "9223372036854775808", "#9223372036854775807", "99999999999999999999", "\"5\"", "12a", "٣"} {
		p, v, ok := intToken(tok)
		wp, wv, wok := reference(tok)
		if p != wp || v != wv || ok != wok {
			t.Errorf("intToken(%q) = %q, %d, %v; want %q, %d, %v", tok, p, v, ok, wp, wv, wok)
		}
	}
}
