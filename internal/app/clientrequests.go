package app

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// lateClientRequests hands backends' requests to clients to the surface
// (surface.Surface.ClientRequests), which New builds after the manager;
// backends send requests only once the manager is started, when it exists.
type lateClientRequests struct{ a *App }

func (l lateClientRequests) CreateMessage(ctx context.Context, name string, p *mcp.CreateMessageWithToolsParams) (*mcp.CreateMessageWithToolsResult, error) {
	return l.a.Surface.ClientRequests().CreateMessage(ctx, name, p)
}

func (l lateClientRequests) Elicit(ctx context.Context, name string, p *mcp.ElicitParams) (*mcp.ElicitResult, error) {
	return l.a.Surface.ClientRequests().Elicit(ctx, name, p)
}

func (l lateClientRequests) ListRoots(ctx context.Context, name string, p *mcp.ListRootsParams) (*mcp.ListRootsResult, error) {
	return l.a.Surface.ClientRequests().ListRoots(ctx, name, p)
}

func (l lateClientRequests) ElicitationComplete(name string, p *mcp.ElicitationCompleteParams) {
	l.a.Surface.ClientRequests().ElicitationComplete(name, p)
}
