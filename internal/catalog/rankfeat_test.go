package catalog

import (
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// searchFirst checks that each query's first hit in c is the given tool.
func searchFirst(t *testing.T, c *Catalog, cases map[string]string) {
	t.Helper()
	for query, first := range cases {
		if names := hitNames(c.Search(query, SearchOptions{})); len(names) == 0 || names[0] != first {
			t.Errorf("%q: hits %v, want %s first", query, names, first)
		}
	}
}

// TestSearchParameterValues: the values a parameter may take are words of
// the tool: "close a ticket" finds the tool whose state takes "closed",
// not the one that only reads tickets, though both say "ticket" alike.
func TestSearchParameterValues(t *testing.T) {
	c := New()
	c.SetBackend("desk", nil, []*mcp.Tool{
		{Name: "get_ticket", Description: "Get one ticket.", InputSchema: map[string]any{"type": "object",
			"properties": map[string]any{"id": map[string]any{"type": "string"}}}},
		{Name: "set_ticket", Description: "Set one ticket.", InputSchema: map[string]any{"type": "object",
			"properties": map[string]any{"id": map[string]any{"type": "string"},
				"state": map[string]any{"type": "string", "enum": []any{"open", "closed"}}}}},
		{Name: "merge_tickets", Description: "Merge two tickets.", InputSchema: map[string]any{"type": "object",
			"properties": map[string]any{"how": map[string]any{"const": "squash"}}}},
	})
	searchFirst(t, c, map[string]string{
		"close a ticket":          "desk.set_ticket",
		"squash tickets together": "desk.merge_tickets",
	})
}

// TestSearchNameWordForm: stemming makes "ticket" and "tickets" one word,
// but a name that says one or the other tells a tool about one thing from
// a tool about many: the query's very form decides between them.
func TestSearchNameWordForm(t *testing.T) {
	c := New()
	c.SetBackend("desk", nil, []*mcp.Tool{
		{Name: "get_ticket", Description: "Shows a ticket of the desk."},
		{Name: "list_tickets", Description: "Shows a ticket of the desk."},
	})
	c.SetBackend("chat", nil, []*mcp.Tool{
		{Name: "chat_get_user", Description: "Profile of a chat member."},
		{Name: "chat_get_users", Description: "Profile of a chat member."},
	})
	searchFirst(t, c, map[string]string{
		"show the open tickets": "desk.list_tickets",
		"show one ticket":       "desk.get_ticket",
		"chat users":            "chat.chat_get_users",
		"chat user":             "chat.chat_get_user",
	})
}
