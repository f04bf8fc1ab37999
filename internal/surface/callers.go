package surface

import (
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/isogate/isogate/internal/backend"
)

// callers gives each client session that initialized its backend.Caller:
// what a backend session of the client's own needs (backend/own.go). The
// surface attaches it to the context of every request of the session
// (sessionMiddleware); the backends decide by their sessions setting whether
// the client gets one. When the client session ends, its backend sessions
// are released.
type callers struct {
	release func(key string)            // closes the backend sessions of a key
	watch   func(ss *mcp.ServerSession) // makes ss's end call forget (sessionTracker.watch)

	next atomic.Uint64
	mu   sync.Mutex
	all  map[*mcp.ServerSession]*backend.Caller
}

// of returns ss's Caller, made on first use; nil before ss initialized.
func (cs *callers) of(ss *mcp.ServerSession, make func(key string) *backend.Caller) *backend.Caller {
	if ss == nil || ss.InitializeParams() == nil {
		return nil
	}
	cs.mu.Lock()
	if c, ok := cs.all[ss]; ok {
		cs.mu.Unlock()
		return c
	}
	if cs.all == nil {
		cs.all = map[*mcp.ServerSession]*backend.Caller{}
	}
	c := make("client-" + strconv.FormatUint(cs.next.Add(1), 10))
	cs.all[ss] = c
	cs.mu.Unlock()
	if cs.watch != nil {
		cs.watch(ss)
	}
	return c
}

// forget releases the backend sessions of the ended session ss (a close
// hook of the session tracker).
func (cs *callers) forget(ss *mcp.ServerSession) {
	cs.mu.Lock()
	c, ok := cs.all[ss]
	delete(cs.all, ss)
	cs.mu.Unlock()
	if ok && cs.release != nil {
		cs.release(c.Key)
	}
}

// callerOf returns the backend.Caller of ss (nil before it initialized):
// its protocol version and capabilities, its backend sessions' requests
// and log messages routed to it alone.
func (sf *Surface) callerOf(ss *mcp.ServerSession) *backend.Caller {
	return sf.callers.of(ss, func(key string) *backend.Caller {
		ip := ss.InitializeParams()
		return &backend.Caller{
			Key:             key,
			ProtocolVersion: ip.ProtocolVersion,
			Capabilities:    ownCapabilities(ip.Capabilities),
			Requests:        sf.forward.Requests(ss),
			OnLog: func(name string, p *mcp.LoggingMessageParams) {
				sf.forward.LogTo(ss, name, p)
			},
		}
	})
}

// ownCapabilities are the client capabilities declared to a client's own
// backend sessions: sampling and elicitation as the client declared them,
// and roots (the go-sdk cannot tell whether a client declared roots; one
// that did not answers the backend's roots/list with an error).
func ownCapabilities(client *mcp.ClientCapabilities) *mcp.ClientCapabilities {
	caps := &mcp.ClientCapabilities{RootsV2: &mcp.RootCapabilities{}}
	if client != nil {
		caps.Sampling = client.Sampling
		caps.Elicitation = client.Elicitation
	}
	return caps
}
