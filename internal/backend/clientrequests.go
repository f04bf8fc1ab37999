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

// sessionProfile is what one backend session declares about its client,
// and where the session's requests and log messages go.
type sessionProfile struct {
	version  string                  // protocol version asked for; "" the newest both speak
	caps     *mcp.ClientCapabilities // nil: none
	requests ClientRequests          // nil: none routed
	onLog    func(backend string, p *mcp.LoggingMessageParams)
	// shared marks the supervised session every client shares: it
	// reports list changes and resource updates.
	shared bool
}

// capabilities returns the client capabilities the session declares:
// none when no requests are routed.
func (p sessionProfile) capabilities() *mcp.ClientCapabilities {
	if p.requests == nil || p.caps == nil {
		return &mcp.ClientCapabilities{}
	}
	return p.caps
}

// sharedProfile is the profile of the session every client shares. It
// declares sampling (with tools), elicitation (form and url) and roots
// (without listChanged) when [Options.ClientRequests] routes them, whatever
// the clients connected later declare: its handshake happens before any
// client is known (a request a calling client cannot answer gets an
// error). It pins the backend's protocol version when the spec asks for
// one; otherwise the backend and the gateway agree on the newest both
// speak. A session on 2025-11-25 or older may send sampling, elicitation
// and roots requests during a call (routed to the calling client); on
// 2026-07-28 the go-sdk forbids them and input requests travel inside
// results instead. A client whose requests the shared session cannot carry
// gets a session of its own (own.go).
func (b *backend) sharedProfile(c *conn) sessionProfile {
	var requests ClientRequests
	if b.opts.ClientRequests != nil {
		requests = attributed{c: c, log: b.log, name: b.spec.Name, others: b.opts.ClientRequests}
	}
	var onLog func(string, *mcp.LoggingMessageParams)
	if b.opts.OnLog != nil {
		onLog = attributedLog(c, b.log, b.opts.OnLog)
	}
	return sessionProfile{
		version: b.spec.ProtocolVersion,
		caps: &mcp.ClientCapabilities{
			RootsV2:     &mcp.RootCapabilities{},
			Sampling:    &mcp.SamplingCapabilities{Tools: &mcp.SamplingToolsCapabilities{}},
			Elicitation: &mcp.ElicitationCapabilities{Form: &mcp.FormElicitationCapabilities{}, URL: &mcp.URLElicitationCapabilities{}},
		},
		requests: requests,
		onLog:    onLog,
		shared:   true,
	}
}

// routeClientRequests sets the handlers that route a backend's requests to
// cr on client options, and returns what adds the rest to the client.
func (b *backend) routeClientRequests(client *mcp.ClientOptions, cr ClientRequests) (addTo func(*mcp.Client)) {
	if cr == nil {
		return func(*mcp.Client) {}
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
	return func(c *mcp.Client) { c.AddReceivingMiddleware(route) }
}
