package main

import (
	"fmt"
	"strings"

	"github.com/isogate/isogate/internal/app"
	"github.com/isogate/isogate/internal/catalog"
)

func joinArgs(args []string) string { return strings.Join(args, " ") }

func searchText(g *app.App, query string, limit int) string {
	return g.Catalog.Search(query, catalog.SearchOptions{Limit: limit}).Text()
}

// listText lists every tool of the catalogue, one line each: its name and
// summary, sorted by name.
func listText(g *app.App) string {
	entries := g.Catalog.Entries()
	var b strings.Builder
	if len(entries) == 1 {
		b.WriteString("1 tool\n")
	} else {
		fmt.Fprintf(&b, "%d tools\n", len(entries))
	}
	for _, e := range entries {
		if e.Summary != "" {
			fmt.Fprintf(&b, "%s — %s\n", e.Name, e.Summary)
		} else {
			fmt.Fprintln(&b, e.Name)
		}
	}
	return b.String()
}
