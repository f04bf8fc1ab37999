package codemode

import (
	"context"
	"fmt"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/isogate/isogate/internal/catalog"
	"github.com/isogate/isogate/internal/codemode/output"
)

// BenchmarkTrivialRunByCatalogueSize measures a tier-3 `return 1` on the
// warm in-process pool with 10, 100, 1 000 and 5 000 tools in the
// catalogue (spread over 10 backends): the lazy bridge keeps the cost of a
// run independent of the catalogue's size.
func BenchmarkTrivialRunByCatalogueSize(b *testing.B) {
	for _, n := range []int{10, 100, 1000, 5000} {
		b.Run(fmt.Sprintf("tools=%d", n), func(b *testing.B) {
			cat := catalog.New()
			perBackend := max(n/10, 1)
			for be := 0; be*perBackend < n; be++ {
				var tools []*mcp.Tool
				for i := 0; i < perBackend && be*perBackend+i < n; i++ {
					tools = append(tools, &mcp.Tool{Name: fmt.Sprintf("tool-%d", i), Description: "A tool.",
						InputSchema: map[string]any{"type": "object"}})
				}
				cat.SetBackend(fmt.Sprintf("backend-%d", be), nil, tools)
			}
			e, err := New(Options{Runner: sharedPool(), Catalog: FromCatalog(cat), Caller: sessionCaller{},
				Output: output.DefaultOptions(), Logger: discardLogger()})
			if err != nil {
				b.Fatal(err)
			}
			req := Request{Code: "const x = 1;\nreturn x"} // not a fast-path form: always tier 3
			if r := e.Execute(context.Background(), req); r.IsError || r.Tier != TierV8 || r.Text != "1" {
				b.Fatalf("%s %s", r.Tier, r.Text)
			}
			b.ResetTimer()
			for b.Loop() {
				e.Execute(context.Background(), req)
			}
		})
	}
}
