package embedsearch

import (
	"bufio"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/isogate/isogate/config"
	"github.com/isogate/isogate/internal/catalog"
	"github.com/isogate/isogate/internal/testutil"
	"github.com/isogate/isogate/internal/testutil/fakeembed"
)

// searchBenchDir holds the search benchmark's real catalogues and queries
// (bench/searchbench/README.md).
var searchBenchDir = filepath.Join("..", "..", "bench", "searchbench")

// benchQuery is one benchmark query with the tools accepted as its answer.
type benchQuery struct {
	query    string
	accepted []string
	names    bool // the query names the tool ([name] section)
}

// loadSearchBench loads the benchmark's catalogues (one backend per file)
// and its queries; the test is skipped when the benchmark is absent.
func loadSearchBench(t *testing.T) (*catalog.Catalog, []benchQuery) {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(searchBenchDir, "catalogs", "*.json"))
	if len(files) == 0 {
		t.Skipf("no search benchmark in %s", searchBenchDir)
	}
	c := catalog.New()
	for _, f := range files {
		var cat struct {
			Tools []*mcp.Tool `json:"tools"`
		}
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(data, &cat); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		c.SetBackend(strings.TrimSuffix(filepath.Base(f), ".json"), nil, cat.Tools)
	}
	f, err := os.Open(filepath.Join(searchBenchDir, "queries.txt"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var qs []benchQuery
	names := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		s := strings.TrimSpace(sc.Text())
		switch {
		case s == "" || strings.HasPrefix(s, "#"):
			continue
		case s == "[paraphrase]" || s == "[name]":
			names = s == "[name]"
			continue
		}
		q, a, ok := strings.Cut(s, "=>")
		if !ok {
			t.Fatalf("queries.txt: %q", s)
		}
		qs = append(qs, benchQuery{query: strings.TrimSpace(q), accepted: strings.Fields(a), names: names})
	}
	return c, qs
}

// benchScore counts the queries whose accepted tool is first, and in the
// first three.
type benchScore struct{ n, top1, top3 int }

func (s benchScore) String() string {
	pct := func(a int) float64 { return 100 * float64(a) / float64(max(s.n, 1)) }
	return fmt.Sprintf("top-1 %d/%d (%.0f %%), top-3 %d/%d (%.0f %%)", s.top1, s.n, pct(s.top1), s.top3, s.n, pct(s.top3))
}

func (s *benchScore) add(q benchQuery, got []string) {
	s.n++
	first := slices.IndexFunc(got, func(n string) bool { return slices.Contains(q.accepted, n) })
	if first == 0 {
		s.top1++
	}
	if first >= 0 && first < 3 {
		s.top3++
	}
}

// TestSearchBenchFused scores the benchmark's queries ranked lexically, by
// the embeddings alone and fused, side by side. The embeddings are the fake
// endpoint's (a hashed bag of words with eight synonym classes written for
// the tests, not a model): the figures show what fusion does with a
// second ranking, not what a model would find. Queries that name the tool
// must lose nothing to fusion. To measure a real model instead, set
// ISOGATE_BENCH_EMBEDDINGS_URL and ISOGATE_BENCH_EMBEDDINGS_MODEL (e.g. an
// Ollama's http://127.0.0.1:11434/v1 and nomic-embed-text) and run
// `go test -run TestSearchBenchFused -v ./internal/embedsearch`.
func TestSearchBenchFused(t *testing.T) {
	cat, qs := loadSearchBench(t)
	var h *harness
	if url := os.Getenv("ISOGATE_BENCH_EMBEDDINGS_URL"); url != "" {
		// A real endpoint, to measure a model on the benchmark.
		h = &harness{cat: cat, logs: &testutil.Buffer{}}
		h.sem = New(Options{Client: NewClient(config.EmbeddingsConfig{URL: url, Model: os.Getenv("ISOGATE_BENCH_EMBEDDINGS_MODEL")}),
			Catalog: cat, QueryTimeout: time.Minute, Logger: slog.New(slog.NewTextHandler(h.logs, nil))})
		t.Cleanup(func() { h.sem.Close() })
	} else {
		h = newHarness(t, fakeembed.Start(t, fakeembed.Options{Model: testModel}), cat, nil, waitLong)
	}
	h.waitReady(t)
	var lex, sem, fused [2]benchScore // [0] paraphrases, [1] naming the tool
	set := h.sem.cur.Load()
	for _, q := range qs {
		i := 0
		if q.names {
			i = 1
		}
		lex[i].add(q, names(cat.Search(q.query, catalog.SearchOptions{Limit: 3}).Hits))
		qv, err := h.sem.client.Embed(t.Context(), []string{q.query})
		if err != nil {
			t.Fatal(err)
		}
		var semNames []string
		for _, e := range semanticRanking(set, qv[0], "", 3) {
			semNames = append(semNames, e.Name)
		}
		sem[i].add(q, semNames)
		res, notice := h.sem.Search(t.Context(), q.query, catalog.SearchOptions{Limit: 3})
		if notice != "" {
			t.Fatalf("%q: %s", q.query, notice)
		}
		fused[i].add(q, names(res.Hits))
	}
	t.Logf("paraphrases:      lexical %v | the fake endpoint alone %v | fused %v", lex[0], sem[0], fused[0])
	t.Logf("naming the tool:  lexical %v | the fake endpoint alone %v | fused %v", lex[1], sem[1], fused[1])
	if fused[1].top1 < lex[1].top1 || fused[1].top3 < lex[1].top3 {
		t.Errorf("fusion loses queries that name the tool: lexical %v, fused %v", lex[1], fused[1])
	}
}
