package gateway

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/isogate/isogate/config"
	"github.com/isogate/isogate/internal/app"
	"github.com/isogate/isogate/internal/backend"
	"github.com/isogate/isogate/internal/resultstore/redistest"
	"github.com/isogate/isogate/internal/testutil"
	"github.com/isogate/isogate/internal/testutil/fakeembed"
)

// filesServer is a backend whose words are not an agent's: a folder is a
// directory, people are users.
func filesServer() *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "files"}, nil)
	noop := func(context.Context, *mcp.CallToolRequest, map[string]any) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{}, nil, nil
	}
	for _, t := range []struct{ name, desc string }{
		{"create_directory", "Create a new directory or ensure a directory exists."},
		{"write_file", "Create a new file or completely overwrite an existing file with new content."},
		{"edit_file", "Make line-based edits to a text file."},
		{"search_users", "Search for users on GitHub."},
		{"search_repositories", "Search for GitHub repositories."},
	} {
		mcp.AddTool(s, &mcp.Tool{Name: t.name, Description: t.desc, InputSchema: map[string]any{"type": "object",
			"properties": map[string]any{"path": map[string]any{"type": "string"}}}}, noop)
	}
	return s
}

// TestSearchEmbeddingsSharedByReplicas: two gateway replicas on one real
// redis-server, configured (from a file, the key from the environment)
// with one embeddings endpoint, started at once: the endpoint embeds each
// tool once between them (sessions and replicas share the vectors),
// search_tools over the MCP surface puts the tool an agent means first on
// either replica, and an endpoint that stops answering makes search answer
// by words within search.embeddings.timeout, saying so.
func TestSearchEmbeddingsSharedByReplicas(t *testing.T) {
	srv := redistest.ForTest(t)
	ep := fakeembed.Start(t, fakeembed.Options{Model: "fake-bow", Auth: "Bearer s3cret-embeddings-key"})
	file := filepath.Join(t.TempDir(), "isogate.yaml")
	if err := os.WriteFile(file, []byte(`
store:
  redis_url: ${REDIS_URL}
search:
  embeddings:
    url: ${EMBED_URL}
    model: fake-bow
    headers: {Authorization: "Bearer ${EMBED_KEY}"}
    timeout: 300ms
    batch_size: 2
`), 0o600); err != nil {
		t.Fatal(err)
	}
	var gs []*Gateway
	for range 2 {
		cfg, err := config.Load(config.LoadOptions{Path: file, Environ: []string{"REDIS_URL=" + srv.URL(),
			"EMBED_URL=" + strings.TrimSuffix(ep.URL, "/embeddings"), // a base URL: /embeddings is appended
			"EMBED_KEY=s3cret-embeddings-key"}})
		if err != nil {
			t.Fatal(err)
		}
		cfg.Server.CacheDir = t.TempDir()
		cfg.RunCode.Enabled = false
		g, err := build(cfg, app.Options{Runner: testPool(), ExtraSpecs: []backend.Spec{backend.InMemory("files", filesServer())}})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { g.Close() })
		gs = append(gs, g)
	}
	for _, g := range gs {
		g.Start(t.Context())
	}
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	for _, g := range gs {
		if err := g.app.Backends.WaitHealthy(ctx); err != nil {
			t.Fatal(err)
		}
		if err := g.app.Semantic.WaitReady(ctx); err != nil {
			t.Fatalf("tool vectors not ready: %v", err)
		}
	}
	for i, g := range gs {
		for range 2 { // sessions share the vectors
			cs := connect(t, g, nil)
			text, isErr, _ := callText(t, cs, "search_tools", map[string]any{"query": "make a new folder", "limit": 3})
			if isErr || !strings.HasPrefix(strings.SplitN(text, "\n", 3)[1], "files.create_directory") || strings.Contains(text, "Ranked by words only") {
				t.Fatalf("replica %d: search_tools:\n%s", i, text)
			}
		}
	}
	stats := ep.Stats(t)
	entries, _ := gs[0].app.Catalog.View()
	for _, e := range entries {
		if n := stats.Inputs[e.EmbeddingText()]; n != 1 {
			t.Errorf("%s embedded %d times by two replicas, want once", e.Name, n)
		}
	}

	ep.SetMode(t, fakeembed.ModeHang)
	cs := connect(t, gs[1], nil)
	text, _, _ := callText(t, cs, "search_tools", map[string]any{"query": "make a new folder", "limit": 3})
	if !strings.Contains(text, "Ranked by words only: the embeddings endpoint did not answer within 300ms.") {
		t.Fatalf("search_tools with the endpoint hanging:\n%s", text)
	}
	if n := gatherCounter(t, gs[1].app.Metrics.Registry(), "isogate_search_embeddings_fallbacks_total", "timeout"); n != 1 {
		t.Errorf("isogate_search_embeddings_fallbacks_total{reason=timeout} = %v, want 1", n)
	}
}

// gatherCounter reads the counter name whose one label has value.
func gatherCounter(t *testing.T, reg *prometheus.Registry, name, value string) float64 {
	t.Helper()
	fams, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fams {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			if ls := m.GetLabel(); len(ls) == 1 && ls[0].GetValue() == value {
				return m.GetCounter().GetValue()
			}
		}
	}
	return 0
}

// TestSearchEmbeddingsNeverBlock: with an embeddings endpoint that hangs
// from the start, a client connects, lists the tools and searches without
// waiting for it: the tool vectors are computed in the background, and
// search answers by words, saying the embeddings are still being computed.
func TestSearchEmbeddingsNeverBlock(t *testing.T) {
	ep := fakeembed.Start(t, fakeembed.Options{Model: "fake-bow"})
	ep.SetMode(t, fakeembed.ModeHang)
	cfg := config.Default()
	cfg.Server.CacheDir = t.TempDir()
	cfg.RunCode.Enabled = false
	cfg.Search.Embeddings.URL, cfg.Search.Embeddings.Model = ep.URL, "fake-bow"
	g, err := build(cfg, app.Options{Runner: testPool(), ExtraSpecs: []backend.Spec{backend.InMemory("files", filesServer())}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.Close() })
	g.Start(t.Context())
	if err := g.app.Backends.WaitHealthy(t.Context()); err != nil {
		t.Fatal(err)
	}
	cs := connect(t, g, nil)
	if _, err := cs.ListTools(t.Context(), nil); err != nil {
		t.Fatal(err)
	}
	text, isErr, _ := callText(t, cs, "search_tools", map[string]any{"query": "write a file"})
	if isErr || !strings.Contains(text, "files.write_file") ||
		!strings.HasSuffix(strings.TrimSpace(text), "Ranked by words only: tool embeddings are still being computed.") {
		t.Fatalf("search_tools while the endpoint hangs:\n%s", text)
	}
	testutil.Eventually(t, 30*time.Second, func() bool { return ep.Stats(t).Requests > 0 },
		"the tool vectors' first request at the endpoint")
}
