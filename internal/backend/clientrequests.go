package backend

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// ClientRequests answers the requests a backend sends its client (the
// gateway) while it serves a call: the implementation finds the client
// session whose call caused the request and asks it. Its methods run on
// their own goroutine per request (the go-sdk handles incoming requests
// asynchronously), with a context that ends when the backend cancels the
// request or the connection ends. An error that is a *jsonrpc.Error goes
// back to the backend with its code.
type ClientRequests interface {
	CreateMessage(ctx context.Context, backend string, p *mcp.CreateMessageWithToolsParams) (*mcp.CreateMessageWithToolsResult, error)
	Elicit(ctx context.Context, backend string, p *mcp.ElicitParams) (*mcp.ElicitResult, error)
	ListRoots(ctx context.Context, backend string, p *mcp.ListRootsParams) (*mcp.ListRootsResult, error)
	// ElicitationComplete receives a backend's
	// notifications/elicitation/complete (the end of a "url" elicitation).
	ElicitationComplete(backend string, p *mcp.ElicitationCompleteParams)
}

// clientCapabilities are the client capabilities declared to backends:
// none without [Options.ClientRequests]; with it sampling (with tools),
// elicitation (form and url) and roots (without listChanged), whatever the
// clients connected later declare: the handshake happens once per backend
// connection, before any client is known. A request a calling client
// cannot answer gets an error.
func (b *backend) clientCapabilities() *mcp.ClientCapabilities {
	if b.opts.ClientRequests == nil {
		return &mcp.ClientCapabilities{}
	}
	return &mcp.ClientCapabilities{
		RootsV2:     &mcp.RootCapabilities{},
		Sampling:    &mcp.SamplingCapabilities{Tools: &mcp.SamplingToolsCapabilities{}},
		Elicitation: &mcp.ElicitationCapabilities{Form: &mcp.FormElicitationCapabilities{}, URL: &mcp.URLElicitationCapabilities{}},
	}
}

// routeClientRequests sets the handlers that route a backend's requests to
// clients on opts, and returns the session options of the connection.
func (b *backend) routeClientRequests(client *mcp.ClientOptions) (addTo func(*mcp.Client), sess *mcp.ClientSessionOptions) {
	cr := b.opts.ClientRequests
	if cr == nil {
		return func(*mcp.Client) {}, b.sessionOptions()
	}
	name := b.spec.Name
	client.CreateMessageWithToolsHandler = func(ctx context.Context, req *mcp.CreateMessageWithToolsRequest) (*mcp.CreateMessageWithToolsResult, error) {
		return cr.CreateMessage(ctx, name, req.Params)
	}
	client.ElicitationCompleteHandler = func(_ context.Context, req *mcp.ElicitationCompleteNotificationRequest) {
		if req.Params != nil {
			cr.ElicitationComplete(name, req.Params)
		}
	}
	// A receiving middleware takes roots/list, which the go-sdk answers
	// itself (from Client.AddRoots), and elicitation/create, whose schema
	// the go-sdk's client checks with rules of its own (it rejects the
	// titled multi-select of SEP-1330, for one): the calling client is the
	// judge, the gateway passes the request on as it came.
	route := func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			switch method {
			case "roots/list":
				p, _ := req.GetParams().(*mcp.ListRootsParams)
				return cr.ListRoots(ctx, name, p)
			case "elicitation/create":
				p, _ := req.GetParams().(*mcp.ElicitParams)
				return cr.Elicit(ctx, name, p)
			}
			return next(ctx, method, req)
		}
	}
	return func(c *mcp.Client) { c.AddReceivingMiddleware(route) }, b.sessionOptions()
}

// sessionOptions pins the backend's protocol version when its spec asks
// for one; otherwise the backend and the gateway agree on the newest both
// speak. A backend session on 2025-11-25 or older may send sampling,
// elicitation and roots requests during a call (routed to the calling
// client); on 2026-07-28 the go-sdk forbids them and input requests travel
// inside results instead. One backend session serves clients of every
// era, so the backend's version, not the client's, decides which of the
// two a backend can use (one session per client era is future work).
func (b *backend) sessionOptions() *mcp.ClientSessionOptions {
	if b.spec.ProtocolVersion == "" {
		return nil
	}
	return &mcp.ClientSessionOptions{ProtocolVersion: b.spec.ProtocolVersion}
}
