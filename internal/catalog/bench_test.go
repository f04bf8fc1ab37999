package catalog

import (
	"fmt"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// syntheticCatalog builds 50 tools for each of the first nBackends (at most
// 20) backends, with descriptions in the style of real MCP servers (GitHub,
// Slack, databases, …): 1 000 tools for 20 backends.
func syntheticCatalog(tb testing.TB, nBackends int) *Catalog {
	tb.Helper()
	backends := []string{
		"github", "gitlab", "slack", "jira", "confluence", "postgres", "mysql",
		"filesystem", "kubernetes", "docker", "aws-s3", "stripe", "notion",
		"linear", "sentry", "datadog", "google-drive", "calendar", "gmail", "browser",
	}
	nouns := []string{
		"issue", "pull request", "repository", "branch", "commit", "comment",
		"channel", "message", "user", "team", "project", "page", "table", "row",
		"bucket", "object", "pod", "deployment", "container", "invoice",
		"customer", "event", "label", "milestone", "file", "folder", "query",
		"dashboard", "alert", "document", "webhook", "secret", "tag", "release",
		"workflow", "run", "log", "metric", "calendar event", "draft",
	}
	verbs := []struct{ name, desc string }{
		{"list", "Lists %ss visible to the authenticated user, optionally filtered by state and sorted by creation time. Results are paginated."},
		{"get", "Gets a single %s by its identifier, including metadata and related links."},
		{"create", "Creates a new %s with the given fields and returns the created resource."},
		{"update", "Updates an existing %s. Only the provided fields are changed."},
		{"delete", "Permanently deletes a %s. This action cannot be undone."},
		{"search", "Searches %ss using a free-text query with optional filters for owner, date range and status."},
	}
	backends = backends[:nBackends]
	c := New()
	for b, backend := range backends {
		var tools []*mcp.Tool
		for i := range 50 {
			v := verbs[(i+b)%len(verbs)]
			n := nouns[(i*7+b*3)%len(nouns)]
			name := fmt.Sprintf("%s_%s_%d", v.name, n, i)
			tools = append(tools, &mcp.Tool{
				Name:        name,
				Description: fmt.Sprintf(v.desc, n),
				InputSchema: obj([]string{"id"}, map[string]any{
					"id":       str(fmt.Sprintf("Identifier of the %s", n)),
					"owner":    str("Owner or organisation name"),
					"per_page": map[string]any{"type": "integer", "description": "Results per page (max 100)"},
					"state":    map[string]any{"type": "string", "enum": []any{"open", "closed", "all"}},
				}),
			})
		}
		c.SetBackend(backend, []string{fmt.Sprintf("group%d", b%4)}, tools)
	}
	if c.Count() != 50*nBackends {
		tb.Fatalf("count = %d", c.Count())
	}
	return c
}

// BenchmarkSearch1000Tools measures a two-term query over 1 000 tools.
func BenchmarkSearch1000Tools(b *testing.B) {
	c := syntheticCatalog(b, 20)
	if r := c.Search("list issues", SearchOptions{}); len(r.Hits) == 0 {
		b.Fatal("no hits")
	}
	b.ReportAllocs()
	for b.Loop() {
		c.Search("list issues", SearchOptions{})
	}
}

// BenchmarkSearch1000ToolsMisspelt adds fuzzy correction of both terms.
func BenchmarkSearch1000ToolsMisspelt(b *testing.B) {
	c := syntheticCatalog(b, 20)
	if r := c.Search("lsit isues", SearchOptions{}); len(r.Corrections) != 2 {
		b.Fatalf("corrections = %v", r.Corrections)
	}
	b.ReportAllocs()
	for b.Loop() {
		c.Search("lsit isues", SearchOptions{})
	}
}

// BenchmarkSetBackend1000Tools measures replacing one backend of 50 tools
// in a 1 000-tool catalogue followed by a search (snapshot and index
// rebuild).
func BenchmarkSetBackend1000Tools(b *testing.B) {
	c := syntheticCatalog(b, 20)
	e := c.Entries()[0]
	var tools []*mcp.Tool
	for _, x := range c.Entries() {
		if x.Backend == e.Backend {
			tools = append(tools, x.Def)
		}
	}
	b.ReportAllocs()
	for b.Loop() {
		c.SetBackend(e.Backend, nil, tools)
		c.Search("list issues", SearchOptions{})
	}
}

func TestSyntheticSearchQuality(t *testing.T) {
	c := syntheticCatalog(t, 6) // 300 tools: enough competition, fast under -race
	r := c.Search("list issues", SearchOptions{})
	if len(r.Hits) == 0 || r.Hits[0].Tool[:10] != "list_issue" {
		t.Errorf("top hits = %v", hitNames(r))
	}
	r = c.Search("lsit isues", SearchOptions{Limit: 3})
	if len(r.Hits) == 0 || r.Hits[0].Tool[:10] != "list_issue" {
		t.Errorf("misspelt top hits = %v (corrections %v)", hitNames(r), r.Corrections)
	}
}
