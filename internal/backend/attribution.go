package backend

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Attribution on the shared session. A backend's request or log message
// does not say which call it belongs to. Every tool call that carries a
// [Caller] (passthrough and programs alike) is counted on the connection
// while in flight; when all the calls in flight are one Caller's, what the
// backend asks or logs goes to that Caller ([Caller.Requests],
// [Caller.OnLog]). Otherwise it goes to [Options.ClientRequests] and
// [Options.OnLog], which attribute it as well as they can (or refuse).

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

// soleCaller is the one Caller with calls in flight on c, or nil (none,
// or several).
func (c *conn) soleCaller() *Caller {
	c.callersMu.Lock()
	defer c.callersMu.Unlock()
	if len(c.callers) != 1 {
		return nil
	}
	for caller := range c.callers {
		return caller
	}
	return nil
}

// attributed routes the shared session's requests to the sole caller in
// flight when there is one that takes them, else to others.
type attributed struct {
	c      *conn
	others ClientRequests
}

func (a attributed) pick() ClientRequests {
	if one := a.c.soleCaller(); one != nil && one.Requests != nil {
		return one.Requests
	}
	return a.others
}

// CreateMessage implements ClientRequests.
func (a attributed) CreateMessage(ctx context.Context, backend string, p *mcp.CreateMessageWithToolsParams) (*mcp.CreateMessageWithToolsResult, error) {
	return a.pick().CreateMessage(ctx, backend, p)
}

// Elicit implements ClientRequests.
func (a attributed) Elicit(ctx context.Context, backend string, p *mcp.ElicitParams) (*mcp.ElicitResult, error) {
	return a.pick().Elicit(ctx, backend, p)
}

// ListRoots implements ClientRequests.
func (a attributed) ListRoots(ctx context.Context, backend string, p *mcp.ListRootsParams) (*mcp.ListRootsResult, error) {
	return a.pick().ListRoots(ctx, backend, p)
}

// ElicitationComplete implements ClientRequests.
func (a attributed) ElicitationComplete(backend string, p *mcp.ElicitationCompleteParams) {
	a.pick().ElicitationComplete(backend, p)
}
