package clientreq

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/isogate/isogate/internal/backend"
	"github.com/isogate/isogate/internal/pipeline"
	"github.com/isogate/isogate/internal/tasks"
)

// forwardTimeout bounds sending one forwarded notification to one client:
// notifications are forwarded on the backend connection's read loop, so a
// client that does not read must not hold the backend up for long.
const forwardTimeout = tasks.SendTimeout

// progressTokenPrefix starts the progress tokens the gateway sends backends.
const progressTokenPrefix = "isogate-progress-"

// Forwarder brings a backend's notifications about a call to the client
// session whose call caused them:
//
//   - notifications/progress by token: backend sessions are shared by every
//     client, so each call that asks for progress gets a token of the
//     gateway's own, mapped back to the client's session and token while
//     the call is in flight (a program's run gets one for all its calls);
//   - notifications/message (logging) by attribution: the go-sdk does not
//     say which request caused a notification. The backend's shared session
//     hands a message here only while calls without a backend.Caller are in
//     flight on it (backend/attribution.go); it goes to the one client
//     session with calls that may be on that backend (passthrough calls
//     there, program runs anywhere) and, when there are several or none,
//     stays in the gateway's log: never to a guess, never to every session.
//
// It routes the backends' requests to clients too (Requests).
type Forwarder struct {
	logger   *slog.Logger
	requests clientRequests

	next   atomic.Uint64
	mu     sync.Mutex
	tokens map[string]*InFlight          // gateway progress token → call
	calls  map[string]map[*InFlight]bool // backend → its passthrough calls in flight
}

// New returns a Forwarder that logs what it cannot forward to logger.
func New(logger *slog.Logger) *Forwarder {
	f := &Forwarder{logger: logger}
	f.requests.f = f
	return f
}

// InFlight is one passthrough call, or one program's run, whose backends'
// notifications and requests go to its client.
type InFlight struct {
	backend string
	ctx     context.Context // the client request's: notifications travel on its stream
	session *mcp.ServerSession
	token   any // the client's progress token; nil: none asked for

	// f is the Forwarder c is filed with (nil: not filed, nobody to
	// forward to), gatewayToken the progress token it maps to c ("" for
	// none); both set by track.
	f            *Forwarder
	gatewayToken string

	mu    sync.Mutex // serialises its notifications, and them with the call's end
	ended bool

	// run marks a program's run; seq numbers its progress notifications
	// (under mu): a run's progress counts the notifications sent, its own
	// (a call completed) and its backends' alike, so that it increases with
	// each one as the spec requires. total (under mu) is the run's known
	// total, 0 while none is: once a backend reports its own progress with
	// a total, the notifications still to come for that call are added.
	run   bool
	seq   float64
	total float64

	// needed is the client capability ("sampling", "elicitation",
	// "roots") a backend asked for during the call the old way, refused
	// because the client speaks 2026-07-28; "" if none.
	needed atomic.Pointer[string]
}

// Begin registers a passthrough call until c.End is called (when the
// backend has answered, before the result goes back): a client's progress
// token is replaced by one of the gateway's in call.Meta, and the backend
// is asked for its log messages during the call (the per-request level of
// 2026-07-28; older backends ignore the key and were asked once at
// connection). call.Meta, when set, is the gateway's own for this call
// (approvals.forwardClientInput): the keys are added to it in place.
func (f *Forwarder) Begin(ctx context.Context, req *mcp.CallToolRequest, call *pipeline.Call) (c *InFlight) {
	ss, _ := req.GetSession().(*mcp.ServerSession)
	c = &InFlight{backend: call.Backend, ctx: ctx, session: ss}
	if call.Meta == nil {
		call.Meta = mcp.Meta{mcp.MetaKeyLogLevel: string(backend.BackendLogLevel)}
	} else {
		call.Meta[mcp.MetaKeyLogLevel] = string(backend.BackendLogLevel)
	}
	if ss == nil { // nobody to forward to
		return c
	}
	c.token = req.Params.GetProgressToken()
	f.track(c)
	if c.gatewayToken != "" {
		call.Meta["progressToken"] = c.gatewayToken
	}
	return c
}

// track files c among the calls in flight (under its backend, or runKey)
// and, when its client asked for progress, maps a fresh gateway progress
// token to it (c.gatewayToken), until c.End.
func (f *Forwarder) track(c *InFlight) {
	f.mu.Lock()
	if c.token != nil {
		c.gatewayToken = progressToken(f.next.Add(1))
		if f.tokens == nil {
			f.tokens = map[string]*InFlight{}
		}
		f.tokens[c.gatewayToken] = c
	}
	if f.calls == nil {
		f.calls = map[string]map[*InFlight]bool{}
	}
	if f.calls[c.backend] == nil {
		f.calls[c.backend] = map[*InFlight]bool{}
	}
	f.calls[c.backend][c] = true
	f.mu.Unlock()
	c.f = f
}

// End marks c ended and, if it was filed (track), unfiles it: a
// notification being sent then still goes out first, later ones are
// dropped. It is called once, when the call or run is over.
func (c *InFlight) End() {
	if f := c.f; f != nil {
		f.mu.Lock()
		if c.gatewayToken != "" {
			delete(f.tokens, c.gatewayToken)
		}
		// The backend's set stays, empty, for its next call (one per
		// backend: not worth allocating again on every call).
		delete(f.calls[c.backend], c)
		f.mu.Unlock()
	}
	c.mu.Lock()
	c.ended = true
	c.mu.Unlock()
}

// Progress forwards a backend's notifications/progress to the client whose
// call it is about, with the client's own token. Progress for a token the
// gateway did not give that backend, or for a call that has ended, is
// dropped.
func (f *Forwarder) Progress(backendName string, p *mcp.ProgressNotificationParams) {
	token, ok := p.ProgressToken.(string)
	if !ok {
		return
	}
	f.mu.Lock()
	c := f.tokens[token]
	f.mu.Unlock()
	if c != nil && c.run {
		// "everything: 1/20", "everything: indexing 1/20", "everything: indexing".
		var parts []string
		if p.Message != "" {
			parts = append(parts, p.Message)
		}
		left := -1.0 // what the backend has left to do; unknown
		if p.Total > 0 {
			parts = append(parts, fmt.Sprintf("%g/%g", p.Progress, p.Total))
			left = max(p.Total-p.Progress, 0)
		}
		msg := backendName
		if len(parts) > 0 {
			msg += ": " + strings.Join(parts, " ")
		}
		c.sendRunProgress(msg, left)
		return
	}
	if c == nil || c.backend != backendName {
		f.logger.Debug("dropping backend progress for no call in flight", slog.String("backend", backendName))
		return
	}
	c.send(func(ctx context.Context) error {
		return c.session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{
			Meta: p.Meta, ProgressToken: c.token, Progress: p.Progress, Total: p.Total, Message: p.Message})
	})
}

// Log forwards a backend's notifications/message, tagged with the backend
// (logger "<backend>" or "<backend>/<logger>"), to the one client session
// whose calls may have caused it (see soleSessionLocked), at that
// session's logging level (ServerSession.Log); with several or none, it is
// kept in the gateway's log only. Every message is logged by the gateway
// at DEBUG.
func (f *Forwarder) Log(backendName string, p *mcp.LoggingMessageParams) {
	msg := tagLog(backendName, p)
	f.mu.Lock()
	c, several := f.soleSessionLocked(backendName)
	f.mu.Unlock()
	if c == nil {
		f.logger.Debug("backend log message kept in the gateway's log: it cannot be attributed to one client",
			slog.String("backend", backendName), slog.Bool("several_clients", several),
			slog.String("level", string(p.Level)), slog.String("logger", p.Logger), slog.Any("data", p.Data))
		return
	}
	f.logger.Debug("backend log message", slog.String("backend", backendName),
		slog.String("level", string(p.Level)), slog.String("logger", p.Logger), slog.Any("data", p.Data))
	c.send(func(ctx context.Context) error { return c.session.Log(ctx, msg) })
}

// soleSessionLocked returns a call of the one client session whose calls
// may be on backendName (its passthrough calls there, or its program runs,
// which may call any backend), preferring a passthrough call there; nil
// when there is none, or when calls of several sessions are (several).
// f.mu must be held.
func (f *Forwarder) soleSessionLocked(backendName string) (c *InFlight, several bool) {
	for _, key := range []string{backendName, runKey} {
		for x := range f.calls[key] {
			switch {
			case c == nil:
				c = x
			case x.session != c.session:
				return nil, true
			}
		}
	}
	return c, false
}

// callOfLocked returns a call of ss in flight, one on backendName if there
// is one (else any: a program's run counts, see BeginRun), or nil. f.mu
// must be held.
func (f *Forwarder) callOfLocked(ss *mcp.ServerSession, backendName string) *InFlight {
	var any *InFlight
	for name, set := range f.calls {
		for c := range set {
			if c.session != ss {
				continue
			}
			if name == backendName {
				return c
			}
			any = c
		}
	}
	return any
}

// BeginRun registers a program's run (call_tool_chain, run_code) of ss
// until c.End is called: requests and log messages of the client's own
// backend sessions travel on its request while it runs.
//
// With the client's progress token (nil: none), the run gets a gateway
// token for the backends' progress (backend.WithProgressToken), reported
// as the run's progress with the client's token.
func (f *Forwarder) BeginRun(ctx context.Context, ss *mcp.ServerSession, clientToken any) (c *InFlight, gatewayToken string) {
	if ss == nil {
		return &InFlight{run: true, ended: true}, ""
	}
	c = &InFlight{backend: runKey, ctx: ctx, session: ss, token: clientToken, run: true}
	f.track(c)
	return c, c.gatewayToken
}

// progressToken is the gateway's nth progress token: numbered and
// unguessable, so that no backend can send progress into another
// client's call by counting ("isogate-progress-<n>-<random>").
func progressToken(n uint64) string {
	b := make([]byte, 12)
	_, _ = rand.Read(b)
	return progressTokenPrefix + strconv.FormatUint(n, 10) + "-" + hex.EncodeToString(b)
}

// runKey files programs' runs among the calls in flight (no backend has
// an empty name).
const runKey = ""

// LogTo forwards a message of a client's own backend session to that
// client: on a request of its in flight if there is one.
func (f *Forwarder) LogTo(ss *mcp.ServerSession, backendName string, p *mcp.LoggingMessageParams) {
	msg := tagLog(backendName, p)
	f.logger.Debug("backend log message", slog.String("backend", backendName), slog.String("client", ss.ID()),
		slog.String("level", string(p.Level)), slog.String("logger", p.Logger), slog.Any("data", p.Data))
	f.mu.Lock()
	c := f.callOfLocked(ss, backendName)
	f.mu.Unlock()
	if c != nil {
		c.send(func(ctx context.Context) error { return ss.Log(ctx, msg) })
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), forwardTimeout)
	defer cancel()
	_ = ss.Log(ctx, msg)
}

// tagLog returns p with the backend's name in its logger: "<backend>" or
// "<backend>/<logger>".
func tagLog(backendName string, p *mcp.LoggingMessageParams) *mcp.LoggingMessageParams {
	msg := *p
	msg.Logger = backendName
	if p.Logger != "" {
		msg.Logger = backendName + "/" + p.Logger
	}
	return &msg
}

// RunProgress sends the run's next progress notification with message.
func (c *InFlight) RunProgress(message string) { c.sendRunProgress(message, -1) }

// sendRunProgress sends the run's next progress notification with
// message and, once one is known, a total: a backend's progress with a
// total says how many steps its call has left (left; negative: unknown),
// so the run has at least that many notifications to come. The total
// never decreases and is never below the progress, so a client can draw a
// bar as passthrough's {progress, total} lets it.
func (c *InFlight) sendRunProgress(message string, left float64) {
	if c.token == nil {
		return
	}
	c.send(func(ctx context.Context) error {
		c.seq++
		switch {
		case left >= 0:
			c.total = max(c.total, c.seq+left)
		case c.total > 0:
			c.total = max(c.total, c.seq)
		}
		return c.session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: c.token, Progress: c.seq, Total: c.total, Message: message})
	})
}

// send runs notify with the call's context (bounded by forwardTimeout)
// unless the call has ended.
func (c *InFlight) send(notify func(context.Context) error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ended {
		return
	}
	ctx, cancel := context.WithTimeout(c.ctx, forwardTimeout)
	defer cancel()
	_ = notify(ctx)
}
