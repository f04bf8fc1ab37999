package clientreq

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/isogate/isogate/internal/backend"
)

// outOfCallWait bounds a request a backend sends a client on the client's
// own session while none of its calls is in flight (roots/list as the
// session starts).
const outOfCallWait = 30 * time.Second

// maxURLElicitations bounds the "url" elicitations remembered for their
// notifications/elicitation/complete.
const maxURLElicitations = 1024

// clientRequests routes the requests a backend sends its client while it
// serves a call (sampling/createMessage, elicitation/create, roots/list)
// to the client session whose call caused them, and the answer back (see
// backend.ClientRequests).
//
// A request on a client's own backend session, or on the shared one while
// all the calls in flight there are that client's (backend/attribution.go:
// passthrough calls and program runs alike carry their backend.Caller), is
// for that client (requestRouter.only). The shared session refuses itself
// what belongs to nobody for sure (calls of several clients in flight, or
// none). What remains comes here without a client: calls without a
// backend.Caller are in flight (clients without a session of their own,
// such as 2026-07-28 ones), and the request goes to the one client session
// whose calls may be on that backend (its passthrough calls there or its
// program runs, see Forwarder.soleSessionLocked); with several it is
// refused: a guess could show one client's prompt to another, or give one
// client's answer to another's call.
//
// The request goes to the client with the calling request's context (on
// streamable HTTP it travels on that call's stream), cancelled when the
// call ends or the backend cancels its request. A client that did not
// declare the capability, or that speaks 2026-07-28 (no server-to-client
// requests: the go-sdk refuses them), gives the backend -32601 (method not
// found; the go-sdk replaces the message of that code with "method not
// found: <method>"); a mode or feature of the request it did not declare
// ("url" elicitation, tools in sampling), -32602; a request that cannot be
// attributed, -32603. Errors of the client go back as they came.
type clientRequests struct {
	f *Forwarder

	mu   sync.Mutex
	urls map[string]urlElicitation // elicitationId → where it went
}

// urlElicitation is a "url" elicitation forwarded to a client.
type urlElicitation struct {
	backend string
	session *mcp.ServerSession
}

// requestRouter answers a backend's requests for clients: only, when set,
// is the one client they are for (its own backend sessions,
// backend.Caller); nil routes each to the client it can be attributed to
// (see caller).
type requestRouter struct {
	cr   *clientRequests
	only *mcp.ServerSession
}

var _ backend.ClientRequests = requestRouter{}

// Requests returns what routes backends' requests to clients: to only,
// when set (the client's own backend sessions, backend.Caller), else to
// the client each can be attributed to (give it to
// backend.Options.ClientRequests).
func (f *Forwarder) Requests(only *mcp.ServerSession) backend.ClientRequests {
	return requestRouter{cr: &f.requests, only: only}
}

// caller finds the call a backend's request belongs to, with a context
// for the request to the client: the call's, ended by the end of ctx (the
// backend's request) too. only, when set, is the one client the backend
// session serves (its own session): any of its calls in flight will do,
// and with none (a backend asking for roots as its session starts) the
// request goes to that client outside any call, bounded by
// outOfCallWait.
func (cr *clientRequests) caller(ctx context.Context, backendName, method string, only *mcp.ServerSession) (*InFlight, context.Context, context.CancelFunc, error) {
	f := cr.f
	f.mu.Lock()
	var c *InFlight
	ambiguous := false
	if only != nil {
		c = f.callOfLocked(only, backendName)
	} else {
		c, ambiguous = f.soleSessionLocked(backendName)
	}
	f.mu.Unlock()
	var base context.Context // the request to the client ends with it
	release := func() {}
	switch {
	case c == nil && only != nil:
		c = &InFlight{backend: backendName, session: only}
		base, release = context.WithTimeout(context.Background(), outOfCallWait)
	case ambiguous:
		f.logger.Info("refusing a backend request that cannot be attributed to one client",
			slog.String("backend", backendName), slog.String("method", method), slog.String("reason", "calls of several clients are in flight"))
		return nil, nil, nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError,
			Message: fmt.Sprintf("isogate: %s refused: calls of several clients are in flight on backend %q, so it cannot be attributed to one client", method, backendName)}
	case c == nil:
		f.logger.Info("refusing a backend request that cannot be attributed to one client",
			slog.String("backend", backendName), slog.String("method", method), slog.String("reason", "no call in flight"))
		return nil, nil, nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError,
			Message: fmt.Sprintf("isogate: %s refused: no call is in flight on backend %q, so it cannot be attributed to one client", method, backendName)}
	default:
		base = c.ctx
	}
	if RoundTripEra(c.session) {
		release()
		c.noteNeeded(method)
		return nil, nil, nil, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound,
			Message: fmt.Sprintf("isogate: the calling client speaks %s, which has no server-to-client %s", c.session.InitializeParams().ProtocolVersion, method)}
	}
	rctx, cancel := context.WithCancel(base)
	stop := context.AfterFunc(ctx, cancel)
	cr.f.logger.Debug("routing a backend request to the calling client", slog.String("backend", backendName), slog.String("method", method))
	return c, rctx, func() { stop(); cancel(); release() }, nil
}

// noteNeeded records the capability a refused request of method needed.
func (c *InFlight) noteNeeded(method string) {
	name, _, _ := strings.Cut(method, "/")
	c.needed.CompareAndSwap(nil, &name)
}

// MissingCapability is the spec's error (SEP-2575, -32021) for a call of
// a 2026-07-28 client that failed because its backend asked the client
// something the old way (a request during the call), which such a client
// cannot receive; nil if that did not happen.
func (c *InFlight) MissingCapability() error {
	need := c.needed.Load()
	if need == nil {
		return nil
	}
	caps := &mcp.ClientCapabilities{}
	switch *need {
	case "sampling":
		caps.Sampling = &mcp.SamplingCapabilities{}
	case "elicitation":
		caps.Elicitation = &mcp.ElicitationCapabilities{}
	case "roots":
		caps.RootsV2 = &mcp.RootCapabilities{}
	}
	data, _ := json.Marshal(mcp.MissingRequiredClientCapabilityData{RequiredCapabilities: caps})
	return &jsonrpc.Error{Code: mcp.CodeMissingRequiredClientCapabilities, Data: data,
		Message: fmt.Sprintf("isogate: backend %q needs the client's %s, which it asks for with a request during the call; a client on 2026-07-28 cannot receive one", c.backend, *need)}
}

// clientCaps returns the capabilities the session declared (never nil).
func clientCaps(ss *mcp.ServerSession) *mcp.ClientCapabilities {
	if ip := ss.InitializeParams(); ip != nil && ip.Capabilities != nil {
		return ip.Capabilities
	}
	return &mcp.ClientCapabilities{}
}

// unsupported is the error for a request the calling client did not
// declare: -32601 for the whole feature, -32602 for a part of it.
func unsupported(what string, part bool) error {
	code := int64(jsonrpc.CodeMethodNotFound)
	if part {
		code = jsonrpc.CodeInvalidParams
	}
	return &jsonrpc.Error{Code: code, Message: "isogate: the calling client does not support " + what}
}

// clientError passes a client's JSON-RPC error on as it is; any other
// failure (a cancelled context, a closed session) becomes -32603.
func clientError(method string, err error) error {
	var werr *jsonrpc.Error
	if errors.As(err, &werr) {
		return werr
	}
	return &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: fmt.Sprintf("isogate: %s to the calling client failed: %v", method, err)}
}

// CreateMessage implements backend.ClientRequests.
func (r requestRouter) CreateMessage(ctx context.Context, backendName string, p *mcp.CreateMessageWithToolsParams) (*mcp.CreateMessageWithToolsResult, error) {
	cr := r.cr
	const method = "sampling/createMessage"
	c, rctx, done, err := cr.caller(ctx, backendName, method, r.only)
	if err != nil {
		return nil, err
	}
	defer done()
	caps := clientCaps(c.session)
	if caps.Sampling == nil {
		return nil, unsupported("sampling", false)
	}
	if p != nil && (len(p.Tools) > 0 || p.ToolChoice != nil) && caps.Sampling.Tools == nil {
		return nil, unsupported("tools in sampling", true)
	}
	res, err := c.session.CreateMessageWithTools(rctx, p)
	if err != nil {
		return nil, clientError(method, err)
	}
	return res, nil
}

// Elicit implements backend.ClientRequests.
func (r requestRouter) Elicit(ctx context.Context, backendName string, p *mcp.ElicitParams) (*mcp.ElicitResult, error) {
	cr := r.cr
	const method = "elicitation/create"
	c, rctx, done, err := cr.caller(ctx, backendName, method, r.only)
	if err != nil {
		return nil, err
	}
	defer done()
	caps := clientCaps(c.session).Elicitation
	mode := "form"
	if p != nil && p.Mode != "" {
		mode = p.Mode
	}
	switch {
	case caps == nil:
		return nil, unsupported("elicitation", false)
	case mode == "url" && caps.URL == nil:
		return nil, unsupported(`"url" elicitation`, true)
	case mode == "form" && caps.Form == nil && caps.URL != nil: // neither: form (2025-06-18)
		return nil, unsupported(`"form" elicitation`, true)
	}
	if mode == "url" && p.ElicitationID != "" {
		cr.remember(p.ElicitationID, urlElicitation{backend: backendName, session: c.session})
	}
	res, err := c.session.Elicit(rctx, p)
	if err != nil {
		return nil, clientError(method, err)
	}
	return res, nil
}

// ListRoots implements backend.ClientRequests. The go-sdk cannot tell
// whether a client declared roots (it decodes "roots": {} and no roots
// alike), so the request is always sent: a client without roots answers
// it with an error, which the backend receives.
func (r requestRouter) ListRoots(ctx context.Context, backendName string, p *mcp.ListRootsParams) (*mcp.ListRootsResult, error) {
	cr := r.cr
	const method = "roots/list"
	c, rctx, done, err := cr.caller(ctx, backendName, method, r.only)
	if err != nil {
		return nil, err
	}
	defer done()
	res, err := c.session.ListRoots(rctx, p)
	if err != nil {
		return nil, clientError(method, err)
	}
	return res, nil
}

// ElicitationComplete implements backend.ClientRequests: the notification
// goes to the session that received the "url" elicitation (even after the
// call ended); one for an elicitation the gateway did not forward is
// dropped.
func (r requestRouter) ElicitationComplete(backendName string, p *mcp.ElicitationCompleteParams) {
	r.cr.elicitationComplete(backendName, p)
}

func (cr *clientRequests) elicitationComplete(backendName string, p *mcp.ElicitationCompleteParams) {
	cr.mu.Lock()
	u, ok := cr.urls[p.ElicitationID]
	if ok && u.backend == backendName {
		delete(cr.urls, p.ElicitationID)
	}
	cr.mu.Unlock()
	if !ok || u.backend != backendName {
		cr.f.logger.Debug("dropping an elicitation/complete for no forwarded elicitation", slog.String("backend", backendName))
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), forwardTimeout)
	defer cancel()
	_ = u.session.NotifyElicitationComplete(ctx, p)
}

func (cr *clientRequests) remember(id string, u urlElicitation) {
	cr.mu.Lock()
	defer cr.mu.Unlock()
	if cr.urls == nil {
		cr.urls = map[string]urlElicitation{}
	}
	for k := range cr.urls {
		if len(cr.urls) < maxURLElicitations {
			break
		}
		delete(cr.urls, k)
	}
	cr.urls[id] = u
}
