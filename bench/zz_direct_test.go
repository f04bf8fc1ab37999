package bench

import (
	"testing"

	"github.com/isogate/isogate/config"
	"github.com/isogate/isogate/internal/codemode"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func TestZZDirect(t *testing.T) {
	g, err := benchGateway(t.Context(), config.IsolationThread, bigBackend())
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	ctx := t.Context()
	e := g.Engine()
	for i := 0; i < 3; i++ {
		d, _, _ := latency(ctx, 20, func() error {
			_, err := g.Backends().Call(ctx, "big", &mcp.CallToolParams{Name: "mb", Arguments: map[string]any{}})
			return err
		})
		f, _, _ := latency(ctx, 20, func() error {
			e.Execute(ctx, codemode.Request{Code: "const r = await big.mb({});\nreturn r"})
			return nil
		})
		v, _, _ := latency(ctx, 20, func() error {
			r := e.Execute(ctx, codemode.Request{Code: "const r = await big.mb({});\nconst x = r;\nreturn x.items.length"})
			if r.IsError {
				t.Fatal(r.Text)
			}
			return nil
		})
		v2, _, _ := latency(ctx, 20, func() error {
			r := e.Execute(ctx, codemode.Request{Code: "const r = await big.mb({});\nconst x = r;\nreturn x"})
			if r.IsError {
				t.Fatal(r.Text)
			}
			return nil
		})
		t.Logf("direct %v  fast %v  v8-len %v  v8-full %v", d, f, v, v2)
	}
}
