package bench

import (
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strings"
	"time"
)

// Names of the built-in workloads.
const (
	WorkloadTrivial    = "trivial"
	WorkloadObjects10k = "objects-10k"
	WorkloadFib27      = "fib-27"
	WorkloadJSON1MB    = "json-1mb"
	WorkloadParallel10 = "parallel-10x20ms"
	WorkloadSeq1000    = "sequential-1000"
	WorkloadAgentChain = "agent-chain"
)

// WorkloadByName returns the registered workload called name, or nil.
func WorkloadByName(name string) *Workload {
	for _, w := range Workloads() {
		if w.Name == name {
			return w
		}
	}
	return nil
}

// builtinWorkloads returns the standard workloads. Each Want is computed
// here in Go, independently of any JavaScript engine.
func builtinWorkloads() []*Workload {
	return []*Workload{
		{
			Name:        WorkloadTrivial,
			Kind:        KindOverhead,
			Description: "`return 1`: the fixed cost of one run (context or runtime, bridge setup, result)",
			Source:      `return 1;`,
			Want:        `1`,
		},
		{
			Name:        WorkloadObjects10k,
			Kind:        KindCompute,
			Description: "build 10 000 objects, filter/map/reduce them, JSON.stringify the survivors",
			Source:      objects10kSource,
			Want:        objects10kWant(),
		},
		{
			Name:        WorkloadFib27,
			Kind:        KindCompute,
			Description: "recursive fib(27): raw interpreter/JIT speed (≈ 630 000 calls)",
			Source:      "function fib(n: number): number { return n < 2 ? n : fib(n - 1) + fib(n - 2); }\nreturn fib(27);",
			Want:        `196418`,
			Heavy:       true,
		},
		{
			Name:        WorkloadJSON1MB,
			Kind:        KindCompute,
			Description: "build a ~1 MB document, JSON.stringify it, JSON.parse it back and stringify again",
			Source:      json1mbSource,
			Want:        json1mbWant(),
			Heavy:       true,
		},
		{
			Name:        WorkloadParallel10,
			Kind:        KindIO,
			Description: "10 host calls of 20 ms each under `Promise.all` (ideal: 20 ms; serialized: 200 ms)",
			Source:      parallel10Source,
			Tools:       []Tool{{Name: "fetch_item", Latency: 20 * time.Millisecond, Call: fetchItem}},
			Want:        `385`,
		},
		{
			Name:        WorkloadSeq1000,
			Kind:        KindOverhead,
			Description: "1 000 sequential awaited zero-cost host calls: the bridge's per-call overhead",
			Source:      "let sum = 0;\nfor (let i = 0; i < 1000; i++) sum += await echo(i) as number;\nreturn sum;",
			Tools:       []Tool{{Name: "echo", Call: echoFirst}},
			Want:        `499500`,
		},
		{
			Name:        WorkloadAgentChain,
			Kind:        KindIO,
			Description: "typical agent chain: search (15 ms) → filter/sort → 3 parallel detail calls (10 ms) → summary object",
			Source:      agentChainSource,
			Tools: []Tool{
				{Name: "search", Latency: 15 * time.Millisecond, Call: searchTool},
				{Name: "get_details", Latency: 10 * time.Millisecond, Call: detailsTool},
			},
			Want: agentChainWant(),
		},
	}
}

const objects10kSource = `interface Item { id: number; name: string; price: number; tags: string[]; active: boolean }
const items: Item[] = [];
for (let i = 0; i < 10000; i++) {
  items.push({ id: i, name: "item-" + i, price: ((i * 37) % 1000) / 10, tags: ["t" + (i % 7), "g" + (i % 13)], active: i % 3 !== 0 });
}
const kept = items.filter((x) => x.active && x.tags.includes("t3"));
const mapped = kept.map((x) => ({ id: x.id, label: x.name.toUpperCase(), cents: Math.round(x.price * 100) }));
const total = mapped.reduce((s, x) => s + x.cents, 0);
const json: string = JSON.stringify(mapped);
return { count: mapped.length, total, bytes: json.length };`

func objects10kWant() string {
	type out struct {
		ID    int    `json:"id"`
		Label string `json:"label"`
		Cents int    `json:"cents"`
	}
	var mapped []out
	total := 0
	for i := range 10000 {
		active := i%3 != 0
		if !active || i%7 != 3 {
			continue
		}
		price := float64((i*37)%1000) / 10
		cents := int(math.Floor(price*100 + 0.5))
		mapped = append(mapped, out{i, strings.ToUpper(fmt.Sprintf("item-%d", i)), cents})
		total += cents
	}
	b, _ := json.Marshal(mapped)
	return fmt.Sprintf(`{"count":%d,"total":%d,"bytes":%d}`, len(mapped), total, len(b))
}

const json1mbSource = `type Row = { id: number; name: string; email: string; score: number; tags: string[]; nested: { a: number; b: string } };
const rows: Row[] = [];
for (let i = 0; i < 7500; i++) {
  rows.push({ id: i, name: "row-" + i, email: "user" + i + "@example.com", score: i * 0.5,
    tags: ["alpha", "beta", "gamma"].slice(0, 1 + (i % 3)), nested: { a: i % 10, b: "x".repeat(i % 20) } });
}
const text = JSON.stringify(rows);
const parsed: Row[] = JSON.parse(text);
const again = JSON.stringify(parsed);
return { bytes: text.length, same: again === text, rows: parsed.length, last: parsed[parsed.length - 1].email };`

func json1mbWant() string {
	type nested struct {
		A int    `json:"a"`
		B string `json:"b"`
	}
	type row struct {
		ID     int      `json:"id"`
		Name   string   `json:"name"`
		Email  string   `json:"email"`
		Score  float64  `json:"score"`
		Tags   []string `json:"tags"`
		Nested nested   `json:"nested"`
	}
	rows := make([]row, 7500)
	for i := range rows {
		rows[i] = row{i, fmt.Sprintf("row-%d", i), fmt.Sprintf("user%d@example.com", i), float64(i) * 0.5,
			[]string{"alpha", "beta", "gamma"}[:1+i%3], nested{i % 10, strings.Repeat("x", i%20)}}
	}
	b, _ := json.Marshal(rows)
	return fmt.Sprintf(`{"bytes":%d,"same":true,"rows":7500,"last":"user7499@example.com"}`, len(b))
}

const parallel10Source = `const ids = Array.from({ length: 10 }, (_, i) => i + 1);
const results: { id: number; value: number }[] = await Promise.all(ids.map((id) => fetch_item({ id })));
return results.reduce((s, r) => s + r.value, 0);`

// fetchItem returns {"id": id, "value": id*id} for its argument {"id": id}.
func fetchItem(args json.RawMessage) (json.RawMessage, error) {
	var a []struct {
		ID int `json:"id"`
	}
	if err := json.Unmarshal(args, &a); err != nil || len(a) != 1 {
		return nil, fmt.Errorf("fetch_item expects ({id})")
	}
	return fmt.Appendf(nil, `{"id":%d,"value":%d}`, a[0].ID, a[0].ID*a[0].ID), nil
}

// echoFirst returns its first argument, as cheaply as possible.
func echoFirst(args json.RawMessage) (json.RawMessage, error) {
	s := strings.TrimSpace(string(args))
	if len(s) < 3 || s[0] != '[' || s[len(s)-1] != ']' || strings.Contains(s, ",") {
		return nil, fmt.Errorf("echo expects one scalar argument, got %s", s)
	}
	return json.RawMessage(s[1 : len(s)-1]), nil
}

const agentChainSource = `type Hit = { id: string; title: string; score: number; url: string };
type Detail = { id: string; author: string; words: number; summary: string };
const query = "vector databases";
const hits: Hit[] = await search({ query, limit: 25 });
const top = hits.filter((h) => h.score >= 0.5).sort((a, b) => b.score - a.score).slice(0, 3);
const details: Detail[] = await Promise.all(top.map((h) => get_details({ id: h.id })));
return {
  query,
  considered: hits.length,
  kept: top.length,
  items: details.map((d, i) => ({ id: d.id, title: top[i].title, author: d.author, words: d.words })),
  totalWords: details.reduce((s, d) => s + d.words, 0),
};`

type searchHit struct {
	ID    string  `json:"id"`
	Title string  `json:"title"`
	Score float64 `json:"score"`
	URL   string  `json:"url"`
}

func searchHits(limit int) []searchHit {
	hits := make([]searchHit, limit)
	for i := range hits {
		id := fmt.Sprintf("doc-%d", i)
		hits[i] = searchHit{id, fmt.Sprintf("Result %d about vector databases", i),
			float64((i*7919)%100) / 100, "https://example.com/" + id}
	}
	return hits
}

func searchTool(args json.RawMessage) (json.RawMessage, error) {
	var a []struct {
		Query string `json:"query"`
		Limit int    `json:"limit"`
	}
	if err := json.Unmarshal(args, &a); err != nil || len(a) != 1 || a[0].Limit <= 0 {
		return nil, fmt.Errorf("search expects ({query, limit})")
	}
	return json.Marshal(searchHits(a[0].Limit))
}

type detail struct {
	ID      string `json:"id"`
	Author  string `json:"author"`
	Words   int    `json:"words"`
	Summary string `json:"summary"`
}

func detailOf(id string) detail {
	var n int
	fmt.Sscanf(id, "doc-%d", &n)
	return detail{id, fmt.Sprintf("author-%d", n%5), 100 + n*13, "Summary of " + id + "."}
}

func detailsTool(args json.RawMessage) (json.RawMessage, error) {
	var a []struct {
		ID string `json:"id"`
	}
	if err := json.Unmarshal(args, &a); err != nil || len(a) != 1 {
		return nil, fmt.Errorf("get_details expects ({id})")
	}
	return json.Marshal(detailOf(a[0].ID))
}

func agentChainWant() string {
	hits := searchHits(25)
	var top []searchHit
	for _, h := range hits {
		if h.Score >= 0.5 {
			top = append(top, h)
		}
	}
	sort.SliceStable(top, func(i, j int) bool { return top[i].Score > top[j].Score })
	top = top[:3]
	type item struct {
		ID     string `json:"id"`
		Title  string `json:"title"`
		Author string `json:"author"`
		Words  int    `json:"words"`
	}
	out := struct {
		Query      string `json:"query"`
		Considered int    `json:"considered"`
		Kept       int    `json:"kept"`
		Items      []item `json:"items"`
		TotalWords int    `json:"totalWords"`
	}{Query: "vector databases", Considered: len(hits), Kept: len(top)}
	for _, h := range top {
		d := detailOf(h.ID)
		out.Items = append(out.Items, item{d.ID, h.Title, d.Author, d.Words})
		out.TotalWords += d.Words
	}
	b, _ := json.Marshal(out)
	return string(b)
}
