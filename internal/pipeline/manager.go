package pipeline

import (
	"context"
	"encoding/json"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/isogate/isogate/internal/backend"
)

// Manager is the last stage: it sends tools/call to the backend through
// the backend manager.
func Manager(m *backend.Manager) Caller {
	return CallerFunc(func(ctx context.Context, c *Call) (*mcp.CallToolResult, error) {
		var args any = json.RawMessage("{}")
		if len(c.Args) > 0 {
			args = c.Args
		}
		return m.Call(ctx, c.Backend, &mcp.CallToolParams{Name: c.Tool, Arguments: args, Meta: c.Meta,
			InputResponses: c.InputResponses, RequestState: c.RequestState})
	})
}
