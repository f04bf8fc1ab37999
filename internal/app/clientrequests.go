package app

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/isogate/isogate/internal/backend"
)

// lateClientRequests hands backends' requests to clients to the surface
// (surface.Surface.ClientRequests), which is built after the manager and
// before any backend connects.
type lateClientRequests struct{ a *App }

var errNoSurface = &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "isogate: no client to route the request to"}

func (l lateClientRequests) target() backend.ClientRequests {
	if l.a.Surface == nil {
		return nil
	}
	return l.a.Surface.ClientRequests()
}

func (l lateClientRequests) CreateMessage(ctx context.Context, name string, p *mcp.CreateMessageWithToolsParams) (*mcp.CreateMessageWithToolsResult, error) {
	if t := l.target(); t != nil {
		return t.CreateMessage(ctx, name, p)
	}
	return nil, errNoSurface
}

func (l lateClientRequests) Elicit(ctx context.Context, name string, p *mcp.ElicitParams) (*mcp.ElicitResult, error) {
	if t := l.target(); t != nil {
		return t.Elicit(ctx, name, p)
	}
	return nil, errNoSurface
}

func (l lateClientRequests) ListRoots(ctx context.Context, name string, p *mcp.ListRootsParams) (*mcp.ListRootsResult, error) {
	if t := l.target(); t != nil {
		return t.ListRoots(ctx, name, p)
	}
	return nil, errNoSurface
}

func (l lateClientRequests) ElicitationComplete(name string, p *mcp.ElicitationCompleteParams) {
	if t := l.target(); t != nil {
		t.ElicitationComplete(name, p)
	}
}
