package catalog

import (
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestSearchFoldsAccentsAndWidth: queries and tool text are compared after
// compatibility normalisation (full-width letters are letters) with
// combining marks removed, so "écho", its decomposed form "e\u0301cho" and
// "ｅｃｈｏ" find the echo tool first, as "echo" does, and a tool that says
// "Résumé" is found by "resume" and the other way round.
func TestSearchFoldsAccentsAndWidth(t *testing.T) {
	c := New()
	c.SetBackend("everything", nil, append(everythingTools(),
		&mcp.Tool{Name: "parse-cv", Description: "Parse a Résumé into fields", InputSchema: obj(nil, map[string]any{})},
		&mcp.Tool{Name: "cafe-menu", Description: "List the cafe menu", InputSchema: obj(nil, map[string]any{})}))
	for query, want := range map[string]string{
		"echo":       "everything.echo",
		"écho":       "everything.echo",
		"e\u0301cho": "everything.echo",
		"ＥＣＨＯ":       "everything.echo",
		"ｅｃｈｏ":       "everything.echo",
		"resume":     "everything.parse-cv",
		"RÉSUMÉ":     "everything.parse-cv",
		"café menu":  "everything.cafe-menu",
		"cafe\u0301": "everything.cafe-menu",
	} {
		r := c.Search(query, SearchOptions{})
		if len(r.Hits) == 0 || r.Hits[0].Name != want {
			t.Errorf("%q: hits %v, want %s first", query, hitNames(r), want)
		}
		if len(r.Unmatched) > 0 || len(r.Corrections) > 0 {
			t.Errorf("%q: unmatched %v, corrections %v", query, r.Unmatched, r.Corrections)
		}
	}
}

// TestSearchKeepsOtherScriptsMarks: only Latin, Greek and Cyrillic accents
// fold away; a Japanese voiced mark (が is not か) and a Devanagari vowel
// sign (की is not क) tell words apart.
func TestSearchKeepsOtherScriptsMarks(t *testing.T) {
	c := New()
	c.SetBackend("jp", nil, []*mcp.Tool{
		{Name: "ga", Description: "が tool", InputSchema: obj(nil, map[string]any{})},
		{Name: "ka", Description: "か tool", InputSchema: obj(nil, map[string]any{})},
		{Name: "ki", Description: "की tool", InputSchema: obj(nil, map[string]any{})},
		{Name: "k", Description: "क tool", InputSchema: obj(nil, map[string]any{})},
	})
	for query, want := range map[string]string{"が": "jp.ga", "か": "jp.ka", "की": "jp.ki", "क": "jp.k"} {
		r := c.Search(query, SearchOptions{})
		if len(r.Hits) != 1 || r.Hits[0].Name != want {
			t.Errorf("%q: hits %v, want only %s", query, hitNames(r), want)
		}
	}
}
