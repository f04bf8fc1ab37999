package embedsearch

import (
	"context"
	"crypto/sha256"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/isogate/isogate/internal/catalog"
	"github.com/isogate/isogate/internal/metrics"
	"github.com/isogate/isogate/internal/resultstore/redistest"
	"github.com/isogate/isogate/internal/testutil"
	"github.com/isogate/isogate/internal/testutil/fakeembed"
)

// TestMain lets this test binary serve as the fake embeddings endpoint.
func TestMain(m *testing.M) {
	fakeembed.RunIfRequested()
	os.Exit(m.Run())
}

const testModel = "fake-bow-256"

// waitLong bounds waits for the background computation: a hang, not an
// expectation.
const waitLong = 60 * time.Second

// tool is a tool definition with named string parameters.
func tool(name, desc string, params ...string) *mcp.Tool {
	props := map[string]any{}
	for _, p := range params {
		props[p] = map[string]any{"type": "string"}
	}
	return &mcp.Tool{Name: name, Description: desc, InputSchema: map[string]any{"type": "object", "properties": props}}
}

// testCatalog is a small catalogue whose words differ from the words
// agents ask with: a folder is a directory, people are users.
func testCatalog() *catalog.Catalog {
	c := catalog.New()
	c.SetBackend("fs", nil, []*mcp.Tool{
		tool("create_directory", "Create a new directory or ensure a directory exists.", "path"),
		tool("write_file", "Create a new file or completely overwrite an existing file with new content.", "path", "content"),
		tool("edit_file", "Make line-based edits to a text file.", "path", "edits"),
		tool("get_file_info", "Retrieve detailed metadata about a file: size, creation time, permissions.", "path"),
		tool("move_file", "Move or rename files and directories.", "source", "destination"),
	})
	c.SetBackend("github", nil, []*mcp.Tool{
		tool("search_users", "Search for users on GitHub.", "q"),
		tool("search_repositories", "Search for GitHub repositories.", "query"),
		tool("create_issue", "Create a new issue in a GitHub repository.", "owner", "repo", "title"),
	})
	c.SetBackend("brave", nil, []*mcp.Tool{
		tool("brave_web_search", "Performs a web search using the Brave Search API.", "query", "count"),
	})
	return c
}

// harness is a Semantic over a catalogue, a fake endpoint process and
// metrics of its own.
type harness struct {
	ep   *fakeembed.Process
	cat  *catalog.Catalog
	sem  *Semantic
	met  *metrics.Metrics
	logs *testutil.Buffer
}

func newHarness(t *testing.T, ep *fakeembed.Process, cat *catalog.Catalog, store Store, timeout time.Duration) *harness {
	t.Helper()
	h := &harness{ep: ep, cat: cat, met: metrics.New(metrics.Sources{}), logs: &testutil.Buffer{}}
	h.sem = New(Options{Client: &Client{URL: ep.URL, Model: testModel}, Catalog: cat, Store: store, QueryTimeout: timeout,
		BatchSize: 4, Metrics: h.met, Logger: slog.New(slog.NewTextHandler(h.logs, nil))})
	t.Cleanup(func() { h.sem.Close() })
	return h
}

func (h *harness) waitReady(t *testing.T) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), waitLong)
	defer cancel()
	if err := h.sem.WaitReady(ctx); err != nil {
		t.Fatalf("tool vectors not ready: %v\n%s", err, h.logs)
	}
}

// counter reads a counter of h's metrics with the given labels (0 when
// absent).
func (h *harness) counter(t *testing.T, name string, labels map[string]string) float64 {
	t.Helper()
	return counterValue(t, h.met.Registry(), name, labels)
}

func counterValue(t *testing.T, reg *prometheus.Registry, name string, labels map[string]string) float64 {
	t.Helper()
	fams, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fams {
		if f.GetName() != name {
			continue
		}
	metric:
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if want, ok := labels[l.GetName()]; ok && want != l.GetValue() {
					continue metric
				}
			}
			return m.GetCounter().GetValue()
		}
	}
	return 0
}

func names(hits []catalog.Hit) []string {
	out := make([]string, len(hits))
	for i, h := range hits {
		out[i] = h.Name
	}
	return out
}

// toolTexts are the embedding texts of the catalogue's tools.
func toolTexts(cat *catalog.Catalog) []string {
	entries, _ := cat.View()
	out := make([]string, len(entries))
	for i, e := range entries {
		out[i] = e.EmbeddingText()
	}
	return out
}

// TestFusionFindsWhatWordsMiss: with the tool vectors ready, the fused
// ranking puts first the tool an agent means where its words are not the
// tool's (a folder is a directory, people are users), and keeps first the
// tools that queries name.
func TestFusionFindsWhatWordsMiss(t *testing.T) {
	ep := fakeembed.Start(t, fakeembed.Options{Model: testModel})
	cat := testCatalog()
	h := newHarness(t, ep, cat, nil, waitLong)
	h.waitReady(t)

	differs := 0
	for _, c := range []struct{ query, want string }{
		{"mkdir", "fs.create_directory"},
		{"find people on github", "github.search_users"},
		{"look something up on the internet", "brave.brave_web_search"},
		// Queries that name the tool: no regression.
		{"write_file", "fs.write_file"},
		{"create issue", "github.create_issue"},
		{"move file", "fs.move_file"},
	} {
		lex := cat.Search(c.query, catalog.SearchOptions{Limit: 3})
		res, notice := h.sem.Search(t.Context(), c.query, catalog.SearchOptions{Limit: 3})
		if notice != "" {
			t.Fatalf("%q: notice %q with the vectors ready\n%s", c.query, notice, h.logs)
		}
		if len(res.Hits) == 0 || res.Hits[0].Name != c.want {
			t.Errorf("%q: fused %v, want %s first (lexical %v)", c.query, names(res.Hits), c.want, names(lex.Hits))
			continue
		}
		if len(lex.Hits) == 0 || lex.Hits[0].Name != c.want {
			differs++
		}
		if len(res.Hits) > 3 {
			t.Errorf("%q: %d hits over the limit 3", c.query, len(res.Hits))
		}
	}
	if differs < 2 {
		t.Errorf("fusion changed the first hit of %d queries; the lexical ranking alone already answers this test", differs)
	}
	if n := h.counter(t, "isogate_search_embeddings_requests_total", map[string]string{"kind": "query", "outcome": "ok"}); n != 6 {
		t.Errorf("query requests ok = %v, want 6", n)
	}

	// The tag filter holds for the tools only the embeddings find.
	tagged := catalog.New()
	tagged.SetBackend("fs", []string{"files"}, []*mcp.Tool{tool("create_directory", "Create a new directory.", "path")})
	tagged.SetBackend("github", nil, []*mcp.Tool{tool("search_users", "Search for users on GitHub.", "q")})
	ht := newHarness(t, ep, tagged, nil, waitLong)
	ht.waitReady(t)
	res, _ := ht.sem.Search(t.Context(), "find people", catalog.SearchOptions{Tag: "files"})
	for _, hit := range res.Hits {
		if hit.Backend != "fs" {
			t.Errorf("tag files: hit %s outside the tag", hit.Name)
		}
	}
}

// TestHangingEndpointBoundedFallback: when the endpoint does not answer a
// query's vector, search answers lexically within the bound, says so, and
// counts it.
func TestHangingEndpointBoundedFallback(t *testing.T) {
	ep := fakeembed.Start(t, fakeembed.Options{Model: testModel})
	cat := testCatalog()
	h := newHarness(t, ep, cat, nil, 200*time.Millisecond)
	h.waitReady(t)
	ep.SetMode(t, fakeembed.ModeHang) // holds each request until its client gives up

	res, notice := h.sem.Search(t.Context(), "find people on github", catalog.SearchOptions{Limit: 3})
	if !strings.Contains(notice, "did not answer within 200ms") {
		t.Fatalf("notice %q, want the bound's", notice)
	}
	if lex := cat.Search("find people on github", catalog.SearchOptions{Limit: 3}); fmt.Sprint(names(res.Hits)) != fmt.Sprint(names(lex.Hits)) {
		t.Errorf("fallback %v, want the lexical answer %v", names(res.Hits), names(lex.Hits))
	}
	if n := h.counter(t, "isogate_search_embeddings_fallbacks_total", map[string]string{"reason": "timeout"}); n != 1 {
		t.Errorf("fallbacks{timeout} = %v, want 1", n)
	}
	if !strings.Contains(h.logs.String(), "kind=timeout") {
		t.Errorf("no log line names the timeout:\n%s", h.logs)
	}
}

// TestEndpointFailuresFallBack: an endpoint that fails (HTTP 500, not
// JSON, vectors of another length, gone) makes search answer lexically
// with a notice naming the failure, a log line of its kind and the
// metrics.
func TestEndpointFailuresFallBack(t *testing.T) {
	for _, c := range []struct{ mode, kind string }{
		{fakeembed.ModeStatus, KindStatus},
		{fakeembed.ModeBadJSON, KindBadResponse},
		{fakeembed.ModeWrongDim, KindDimension},
		{"killed", KindUnreachable},
	} {
		t.Run(c.kind, func(t *testing.T) {
			ep := fakeembed.Start(t, fakeembed.Options{Model: testModel})
			cat := testCatalog()
			h := newHarness(t, ep, cat, nil, waitLong)
			h.waitReady(t)
			if c.mode == "killed" {
				ep.Kill()
			} else {
				ep.SetMode(t, c.mode)
			}
			res, notice := h.sem.Search(t.Context(), "find people on github", catalog.SearchOptions{Limit: 3})
			if want := "failed (" + c.kind + ")"; !strings.Contains(notice, want) {
				t.Errorf("notice %q, want %q", notice, want)
			}
			if lex := cat.Search("find people on github", catalog.SearchOptions{Limit: 3}); fmt.Sprint(names(res.Hits)) != fmt.Sprint(names(lex.Hits)) {
				t.Errorf("fallback %v, want the lexical answer %v", names(res.Hits), names(lex.Hits))
			}
			if !strings.Contains(h.logs.String(), "kind="+c.kind) {
				t.Errorf("no log line of kind %s:\n%s", c.kind, h.logs)
			}
			if n := h.counter(t, "isogate_search_embeddings_fallbacks_total", map[string]string{"reason": "error"}); n != 1 {
				t.Errorf("fallbacks{error} = %v, want 1", n)
			}
			if n := h.counter(t, "isogate_search_embeddings_requests_total", map[string]string{"kind": "query", "outcome": c.kind}); n != 1 {
				t.Errorf("requests{query,%s} = %v, want 1", c.kind, n)
			}
		})
	}
}

// TestNotReadyFallsBackThenFuses: while the tool vectors cannot be
// computed (the endpoint fails), search answers lexically with a notice
// naming the failure, which is logged by kind; once the endpoint answers, the next
// catalogue change computes them and search fuses.
func TestNotReadyFallsBackThenFuses(t *testing.T) {
	ep := fakeembed.Start(t, fakeembed.Options{Model: testModel})
	ep.SetMode(t, fakeembed.ModeStatus)
	cat := testCatalog()
	h := newHarness(t, ep, cat, nil, waitLong)
	testutil.Eventually(t, waitLong, func() bool { return strings.Contains(h.logs.String(), "tool vectors not computed") },
		"the failed computation's log line")
	if !strings.Contains(h.logs.String(), "kind=status") {
		t.Errorf("the failure's log line does not name its kind:\n%s", h.logs)
	}
	res, notice := h.sem.Search(t.Context(), "mkdir", catalog.SearchOptions{})
	if want := "Ranked by words only: tool embeddings could not be computed (status); retrying."; notice != want {
		t.Fatalf("notice %q, want %q", notice, want)
	}
	if len(res.Hits) > 0 && res.Hits[0].Name == "fs.create_directory" {
		t.Fatalf("lexical fallback already answers mkdir: %v", names(res.Hits))
	}
	if n := h.counter(t, "isogate_search_embeddings_fallbacks_total", map[string]string{"reason": "not_ready"}); n != 1 {
		t.Errorf("fallbacks{not_ready} = %v, want 1", n)
	}
	ep.SetMode(t, fakeembed.ModeOK)
	h.sem.Changed() // as a catalogue change does; the retry would come anyway
	h.waitReady(t)
	if res, notice := h.sem.Search(t.Context(), "mkdir", catalog.SearchOptions{}); notice != "" || len(res.Hits) == 0 || res.Hits[0].Name != "fs.create_directory" {
		t.Fatalf("after recovery: %v, notice %q", names(res.Hits), notice)
	}
}

// TestCatalogueChangeComputesOnlyWhatChanged: a tool added is embedded
// once, alone; the same tools published again, or a backend that leaves
// and comes back, are not embedded again; no search triggers a
// computation of its own.
func TestCatalogueChangeComputesOnlyWhatChanged(t *testing.T) {
	ep := fakeembed.Start(t, fakeembed.Options{Model: testModel})
	cat := testCatalog()
	h := newHarness(t, ep, cat, nil, waitLong)
	h.waitReady(t)
	for range 3 {
		h.sem.Search(t.Context(), "mkdir", catalog.SearchOptions{})
	}
	before := ep.Stats(t)

	cat.SetBackend("memory", nil, []*mcp.Tool{tool("create_entities", "Create entities in the knowledge graph.", "entities")})
	h.sem.Changed()
	h.waitReady(t)
	after := ep.Stats(t)
	added := toolTexts(cat)
	sent := 0
	for _, text := range added {
		if after.Inputs[text] != 1 {
			t.Errorf("tool text embedded %d times, want once: %q", after.Inputs[text], text)
		}
		sent += after.Inputs[text] - before.Inputs[text]
	}
	if sent != 1 {
		t.Errorf("%d tool texts sent for one tool added, want 1", sent)
	}

	// The same tools again (a reload that changes nothing): no request.
	cat.SetBackend("memory", nil, []*mcp.Tool{tool("create_entities", "Create entities in the knowledge graph.", "entities")})
	h.sem.Changed()
	h.waitReady(t)
	if again := ep.Stats(t); again.Requests != after.Requests {
		t.Errorf("%d requests for a catalogue whose texts did not change", again.Requests-after.Requests)
	}
	// A backend that leaves and comes back: no request either (its
	// vectors are the store's).
	cat.RemoveBackend("memory")
	h.sem.Changed()
	h.waitReady(t)
	cat.SetBackend("memory", nil, []*mcp.Tool{tool("create_entities", "Create entities in the knowledge graph.", "entities")})
	h.sem.Changed()
	h.waitReady(t)
	if again := ep.Stats(t); again.Requests != after.Requests {
		t.Errorf("%d requests for a backend that left and came back", again.Requests-after.Requests)
	}
	if n := h.counter(t, "isogate_search_embeddings_tool_vectors_total", map[string]string{"source": "computed"}); int(n) != len(added) {
		t.Errorf("tool vectors computed = %v, want %d (each tool once)", n, len(added))
	}
}

// TestReplicasShareToolVectorsOnRedis: two replicas of one catalogue on
// one Redis, started at once, compute its tool vectors once between them:
// each tool text reaches the endpoint once, and both fuse.
func TestReplicasShareToolVectorsOnRedis(t *testing.T) {
	srv := redistest.ForTest(t)
	ep := fakeembed.Start(t, fakeembed.Options{Model: testModel})
	var hs []*harness
	for range 2 {
		store, err := NewRedis(srv.URL(), []byte("0123456789abcdef-hmac"))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { store.Close() })
		hs = append(hs, newHarness(t, ep, testCatalog(), store, waitLong))
	}
	for _, h := range hs {
		h.waitReady(t)
		if res, notice := h.sem.Search(t.Context(), "mkdir", catalog.SearchOptions{}); notice != "" || res.Hits[0].Name != "fs.create_directory" {
			t.Fatalf("replica: %v, notice %q", names(res.Hits), notice)
		}
	}
	stats := ep.Stats(t)
	for _, text := range toolTexts(hs[0].cat) {
		if stats.Inputs[text] != 1 {
			t.Errorf("tool text embedded %d times by two replicas, want once: %q", stats.Inputs[text], text)
		}
	}
	stored := hs[0].counter(t, "isogate_search_embeddings_tool_vectors_total", map[string]string{"source": "stored"}) +
		hs[1].counter(t, "isogate_search_embeddings_tool_vectors_total", map[string]string{"source": "stored"})
	if want := float64(len(toolTexts(hs[0].cat))); stored != want {
		t.Errorf("tool vectors read from Redis = %v, want %v (one replica's)", stored, want)
	}
}

// TestForgedStoredVectorsRefused: tool vectors planted in Redis by
// something without store.hmac_key (every tool the same vector: a ranking
// of names only) are refused; the replica computes its own, stores them
// sealed, and ranks by them.
func TestForgedStoredVectorsRefused(t *testing.T) {
	srv := redistest.ForTest(t)
	ep := fakeembed.Start(t, fakeembed.Options{Model: testModel})
	cat := testCatalog()
	entries, _ := cat.View()
	forged := &vectorSet{entries: entries, dims: 256}
	for _, e := range entries {
		forged.texts = append(forged.texts, sha256.Sum256([]byte(e.EmbeddingText())))
		v := make([]float32, 256)
		v[0] = 1
		forged.vecs = append(forged.vecs, v...)
	}
	attacker, err := NewRedis(srv.URL(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer attacker.Close()
	if err := attacker.Put(t.Context(), storeKey(testModel, 0, catalogueHash(forged.texts)), forged.encode()); err != nil {
		t.Fatal(err)
	}

	store, err := NewRedis(srv.URL(), []byte("0123456789abcdef-hmac"))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	h := newHarness(t, ep, cat, store, waitLong)
	h.waitReady(t)
	stats := ep.Stats(t)
	for _, text := range toolTexts(cat) {
		if stats.Inputs[text] != 1 {
			t.Errorf("tool text embedded %d times, want once (the forged entry refused): %q", stats.Inputs[text], text)
		}
	}
	if !strings.Contains(h.logs.String(), "stored tool vectors refused") {
		t.Errorf("no log line says the stored vectors were refused:\n%s", h.logs)
	}
	if res, notice := h.sem.Search(t.Context(), "mkdir", catalog.SearchOptions{}); notice != "" || res.Hits[0].Name != "fs.create_directory" {
		t.Fatalf("search: %v, notice %q", names(res.Hits), notice)
	}
}

// TestQueryNamingAToolKeepsItFirst: a query that is a tool's name (or its
// words) keeps that tool first even where the embeddings prefer another
// (here a tool whose description is all synonyms of "sum"); a bare name
// two backends share keeps both first.
func TestQueryNamingAToolKeepsItFirst(t *testing.T) {
	ep := fakeembed.Start(t, fakeembed.Options{Model: testModel})
	cat := catalog.New()
	cat.SetBackend("calc", nil, []*mcp.Tool{
		tool("get_sum", "Returns the result of a computation over two values.", "a", "b"),
		tool("add_numbers", "Adds numbers together: plus, total, sum, addition.", "numbers"),
	})
	cat.SetBackend("github", nil, []*mcp.Tool{tool("push_files", "Push several files in one commit.", "files")})
	cat.SetBackend("gitlab", nil, []*mcp.Tool{tool("push_files", "Push several files in one commit.", "files")})
	h := newHarness(t, ep, cat, nil, waitLong)
	h.waitReady(t)
	for _, c := range []struct {
		query string
		want  []string
	}{
		{"get_sum", []string{"calc.get_sum"}},
		{"get sum", []string{"calc.get_sum"}},
		{"calc.get-sum", []string{"calc.get_sum"}},
		{"push_files", []string{"github.push_files", "gitlab.push_files"}},
	} {
		res, notice := h.sem.Search(t.Context(), c.query, catalog.SearchOptions{})
		if got := names(res.Hits); notice != "" || len(got) < len(c.want) || fmt.Sprint(got[:len(c.want)]) != fmt.Sprint(c.want) {
			t.Errorf("%q: %v (notice %q), want %v first", c.query, got, notice, c.want)
		}
	}
}

// TestAbandonedLockLapses: a computing lock left by a replica that died
// (planted here, with a short expiry as a lapsed lease has) delays a
// replica only until it lapses: it then computes the tool vectors itself.
func TestAbandonedLockLapses(t *testing.T) {
	srv := redistest.ForTest(t)
	ep := fakeembed.Start(t, fakeembed.Options{Model: testModel})
	cat := testCatalog()
	entries, _ := cat.View()
	texts := make([]textHash, len(entries))
	for i, e := range entries {
		texts[i] = sha256.Sum256([]byte(e.EmbeddingText()))
	}
	dead, err := NewRedis(srv.URL(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer dead.Close()
	if ok, err := dead.Lock(t.Context(), storeKey(testModel, 0, catalogueHash(texts)), 500*time.Millisecond); err != nil || !ok {
		t.Fatalf("planting the lock: %v %v", ok, err)
	}
	store, err := NewRedis(srv.URL(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	h := newHarness(t, ep, cat, store, waitLong)
	h.waitReady(t) // bounded by waitLong (60 s): far below a 10-minute lease, far above 500 ms
	stats := ep.Stats(t)
	for _, text := range toolTexts(cat) {
		if stats.Inputs[text] != 1 {
			t.Errorf("tool text embedded %d times, want once: %q", stats.Inputs[text], text)
		}
	}
}

// TestCatalogueChangeResetsBackoff: while the endpoint fails, each
// catalogue change computes at once and the wait after its failure starts
// again from firstRetry (at startup a few changes in a second had doubled
// it to over a minute, so an endpoint that came up later was first used a
// minute on); without changes the wait doubles up to lastRetry (30 s).
func TestCatalogueChangeResetsBackoff(t *testing.T) {
	ep := fakeembed.Start(t, fakeembed.Options{Model: testModel})
	ep.SetMode(t, fakeembed.ModeStatus)
	waits := make(chan time.Duration, 16)
	sem := New(Options{Client: &Client{URL: ep.URL, Model: testModel}, Catalog: testCatalog(), BatchSize: 4,
		Logger: slog.New(slog.DiscardHandler), retrying: func(d time.Duration) { waits <- d }})
	t.Cleanup(func() { sem.Close() })
	for i := range 5 {
		if i > 0 {
			sem.Changed() // as a backend's tools published at startup do
		}
		select {
		case d := <-waits:
			if d != firstRetry {
				t.Fatalf("failure %d after a catalogue change: retry in %v, want %v", i+1, d, firstRetry)
			}
		case <-time.After(waitLong):
			t.Fatalf("failure %d: no retry chosen", i+1)
		}
	}
	var d time.Duration
	for range 10 {
		d = nextRetry(d)
		if d > 30*time.Second {
			t.Fatalf("backoff grew to %v, beyond 30s", d)
		}
	}
	if d != lastRetry {
		t.Errorf("backoff settles at %v, want %v", d, lastRetry)
	}
}
