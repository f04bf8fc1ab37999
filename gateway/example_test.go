package gateway_test

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/isogate/isogate/config"
	"github.com/isogate/isogate/gateway"
)

// A gateway in front of one in-process backend, with an MCP client
// connected over in-memory transports: the agent's program calls the
// backend's tool as an async function and only its result comes back.
func Example() {
	ctx := context.Background()

	// A backend MCP server with one tool.
	calc := mcp.NewServer(&mcp.Implementation{Name: "calc"}, nil)
	type addArgs struct{ A, B int }
	mcp.AddTool(calc, &mcp.Tool{Name: "add", Description: "Add two numbers."},
		func(_ context.Context, _ *mcp.CallToolRequest, in addArgs) (*mcp.CallToolResult, any, error) {
			return nil, map[string]int{"sum": in.A + in.B}, nil
		})

	cfg := config.Default()
	cfg.Sandbox.Isolation = config.IsolationThread // in this process: no worker binary needed
	cfg.Server.CacheDir = ""                       // no tool-list cache on disk
	g, err := gateway.New(cfg, gateway.Options{
		Backends: []gateway.Backend{gateway.InProcess("calc", calc)},
		Logger:   slog.New(slog.DiscardHandler),
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer g.Close()
	if err := g.Start(ctx); err != nil {
		fmt.Println(err)
		return
	}
	if err := g.WaitReady(ctx, "calc"); err != nil {
		fmt.Println(err)
		return
	}

	// An MCP client, as an agent's host would connect.
	ct, st := mcp.NewInMemoryTransports()
	if _, err := g.Server().Connect(ctx, st, nil); err != nil {
		fmt.Println(err)
		return
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "agent"}, nil)
	cs, err := client.Connect(ctx, ct, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer cs.Close()

	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "call_tool_chain", Arguments: map[string]any{
		"code": `const sums = await Promise.all([1, 2, 3].map(n => calc.add({A: n, B: 10})));
return sums.map(r => r.sum);`,
	}})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(res.Content[0].(*mcp.TextContent).Text)
	// Output:
	// [
	//   11,
	//   12,
	//   13
	// ]
}
