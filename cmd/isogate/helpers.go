package main

import (
	"strings"

	"github.com/isogate/isogate/gateway"
	"github.com/isogate/isogate/gateway/catalog"
)

func joinArgs(args []string) string { return strings.Join(args, " ") }

func searchText(g *gateway.Gateway, query string, limit int) string {
	return g.Catalog().Search(query, catalog.SearchOptions{Limit: limit}).Text()
}
