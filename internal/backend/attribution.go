package backend

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Attribution on the shared session. A backend's request or log message
// does not say which call it belongs to. Every tool call that carries a
// [Caller] (passthrough and programs alike) is counted on the connection
// while in flight, and so is every call without one:
//
//   - when every call in flight is one Caller's, what the backend asks or
//     logs goes to that Caller ([Caller.Requests], [Caller.OnLog]);
//   - when calls of several Callers are in flight, or none at all, it is
//     nobody's for sure: a request is refused to the backend (-32603) and
//     a log message stays in the gateway's log (DEBUG), never delivered to
//     a guess;
//   - when calls without a Caller are in flight (clients without a session
//     of their own: 2026-07-28, stateless), [Options.ClientRequests] and
//     [Options.OnLog] decide, which see every client's calls (and refuse as
//     well when they cannot tell).

// enter counts a call (of caller, nil for none) in flight on c until the
// returned func is called.
func (c *conn) enter(caller *Caller) (leave func()) {
	if caller != nil && caller.Key == "" {
		caller = nil
	}
	c.callersMu.Lock()
	c.calls++
	if caller != nil {
		if c.callers == nil {
			c.callers = map[*Caller]int{}
		}
		c.callers[caller]++
	}
	c.callersMu.Unlock()
	return func() {
		c.callersMu.Lock()
		c.calls--
		if caller != nil {
			if c.callers[caller]--; c.callers[caller] <= 0 {
				delete(c.callers, caller)
			}
		}
		c.callersMu.Unlock()
	}
}

// busy reports whether calls are in flight on c.
func (c *conn) busy() bool {
	c.callersMu.Lock()
	defer c.callersMu.Unlock()
	return c.calls > 0
}

// owners says whose the calls in flight on a connection are.
type owners int

const (
	ownersNone    owners = iota // no call in flight
	ownersOne                   // every call is one Caller's
	ownersSeveral               // calls of two Callers or more
	ownersUnknown               // calls without a Caller among them
)

// owners returns whose the calls in flight on c are, and the Caller when
// they are all one Caller's.
func (c *conn) owners() (owners, *Caller) {
	c.callersMu.Lock()
	defer c.callersMu.Unlock()
	switch {
	case c.calls == 0:
		return ownersNone, nil
	case len(c.callers) > 1:
		return ownersSeveral, nil
	}
	for caller, n := range c.callers {
		if n == c.calls {
			return ownersOne, caller
		}
	}
	return ownersUnknown, nil
}

// attributed routes the shared session's requests to the one Caller whose
// calls are in flight, refuses those that belong to nobody for sure, and
// leaves the rest (calls without a Caller in flight) to others.
type attributed struct {
	c      *conn
	log    *slog.Logger
	name   string // the backend's
	others ClientRequests
}

// pick returns what answers a request of method, or the error refusing
// it.
func (a attributed) pick(method string) (ClientRequests, error) {
	who, caller := a.c.owners()
	switch {
	case who == ownersOne && caller.Requests != nil:
		return caller.Requests, nil
	case who == ownersOne, who == ownersUnknown:
		return a.others, nil
	}
	// Logged without its payload: a prompt or a message may be secret.
	why := "no call is in flight on the backend's shared session"
	if who == ownersSeveral {
		why = "calls of several clients are in flight on the backend's shared session"
		a.log.Info("refusing a backend request that cannot be attributed to one client (backends.<name>.sessions: per_client gives each client a session of its own)",
			slog.String("method", method), slog.String("reason", why))
	} else { // routine: a backend asking for roots as its session starts
		a.log.Debug("refusing a backend request that cannot be attributed to one client",
			slog.String("method", method), slog.String("reason", why))
	}
	return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError,
		Message: fmt.Sprintf("isogate: %s refused: %s, so it cannot be attributed to one client (backend %q)", method, why, a.name)}
}

// CreateMessage implements ClientRequests.
func (a attributed) CreateMessage(ctx context.Context, backend string, p *mcp.CreateMessageWithToolsParams) (*mcp.CreateMessageWithToolsResult, error) {
	to, err := a.pick("sampling/createMessage")
	if err != nil {
		return nil, err
	}
	return to.CreateMessage(ctx, backend, p)
}

// Elicit implements ClientRequests.
func (a attributed) Elicit(ctx context.Context, backend string, p *mcp.ElicitParams) (*mcp.ElicitResult, error) {
	to, err := a.pick("elicitation/create")
	if err != nil {
		return nil, err
	}
	return to.Elicit(ctx, backend, p)
}

// ListRoots implements ClientRequests.
func (a attributed) ListRoots(ctx context.Context, backend string, p *mcp.ListRootsParams) (*mcp.ListRootsResult, error) {
	to, err := a.pick("roots/list")
	if err != nil {
		return nil, err
	}
	return to.ListRoots(ctx, backend, p)
}

// ElicitationComplete implements ClientRequests: it goes where the "url"
// elicitation it completes went, which others remembers (whoever is in
// flight now).
func (a attributed) ElicitationComplete(backend string, p *mcp.ElicitationCompleteParams) {
	a.others.ElicitationComplete(backend, p)
}

// attributedLog routes the shared session's log messages like attributed
// routes its requests: to the one Caller whose calls are in flight, to
// others while calls without a Caller are, else into the gateway's log
// only (DEBUG).
func attributedLog(c *conn, log *slog.Logger, others func(string, *mcp.LoggingMessageParams)) func(string, *mcp.LoggingMessageParams) {
	return func(name string, p *mcp.LoggingMessageParams) {
		who, caller := c.owners()
		switch {
		case who == ownersOne && caller.OnLog != nil:
			caller.OnLog(name, p)
		case who == ownersOne, who == ownersUnknown:
			others(name, p)
		default:
			log.Debug("backend log message kept in the gateway's log: it cannot be attributed to one client",
				slog.Bool("calls_in_flight", who == ownersSeveral),
				slog.String("level", string(p.Level)), slog.String("logger", p.Logger), slog.Any("data", p.Data))
		}
	}
}
