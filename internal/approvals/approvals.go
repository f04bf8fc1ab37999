package approvals

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/isogate/isogate/internal/clientreq"
	"github.com/isogate/isogate/internal/pipeline"
	"github.com/isogate/isogate/internal/tasks"
)

// Approvals reach the person through MCP elicitation. Clients on protocol
// versions before 2026-07-28 are asked with a server-to-client request while
// the program waits (pipeline.ElicitApprover). From 2026-07-28 on, the
// server may not send that request (SEP-2322): call_tool_chain instead
// answers with the approval requests as inputRequests plus a requestState,
// the program stays paused, and the client's retry (with inputResponses and
// that requestState) resumes it. Runs are kept between rounds by
// roundTrips; every wait is bounded by the run's deadline.

// usesRoundTrips reports whether approvals for ss go through multi
// round-trip results.
func usesRoundTrips(ss *mcp.ServerSession) bool {
	return pipeline.CanElicit(ss) && clientreq.RoundTripEra(ss)
}

// liveRun is a call_tool_chain run whose approvals are asked in rounds.
type liveRun struct {
	owner    string
	deadline time.Time
	parkedAt time.Time // when it was last parked (roundTrips.park)
	asks     chan *ask
	done     chan *mcp.CallToolResult // buffered: the run never blocks on it
	cancel   context.CancelFunc
	ended    <-chan struct{} // closed when the run has ended or was cancelled

	// pending are the inputs asked in the last round, by input request
	// id. Only the request currently serving the run touches it.
	pending map[string]*ask
	nextID  int

	canElicit bool // the client declared elicitation (approvals)

	// durable journals the run (sandbox.durable); nil: not durable.
	durable *tasks.Durable
	// preset are the answers a run resumed by replay was given, by
	// request (durable.go).
	presetMu sync.Mutex
	preset   map[string]mcp.InputResponse
}

// ask is one input the program waits for: an approval, or an input
// request of a backend that one of its calls returned.
type ask struct {
	request  mcp.InputRequest
	reply    chan mcp.InputResponse // buffered; nil: not answered
	approval bool                   // the gateway's approval (not a backend's round)
}

// put hands request to whichever call_tool_chain request serves the run
// and waits for the client's answer (nil: none).
func (r *liveRun) put(ctx context.Context, request mcp.InputRequest, approval bool) (mcp.InputResponse, error) {
	if res, ok := r.presetAnswer(request); ok {
		return res, nil
	}
	k := &ask{request: request, reply: make(chan mcp.InputResponse, 1), approval: approval}
	select {
	case r.asks <- k:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	select {
	case res := <-k.reply:
		return res, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// Approve implements pipeline.Approver: the approval is one of the run's
// input requests.
func (r *liveRun) Approve(ctx context.Context, c *pipeline.Call) (bool, error) {
	if !r.canElicit {
		return false, pipeline.ErrCannotAsk
	}
	journal := journalApproval(ctx)
	res, err := r.put(ctx, pipeline.ElicitParams(c), true)
	if err != nil {
		return false, err
	}
	el, _ := res.(*mcp.ElicitResult)
	approved := el != nil && el.Action == "accept"
	journal(approved)
	return approved, nil
}

// ApproveParams implements pipeline.PlanApprover: a plan's approval is
// one of the run's input requests too.
func (r *liveRun) ApproveParams(ctx context.Context, params *mcp.ElicitParams) (bool, error) {
	if !r.canElicit {
		return false, pipeline.ErrCannotAsk
	}
	// Not an approval of a journalled call: a run paused for its plan
	// resumes on this replica only (pauseDurable).
	res, err := r.put(ctx, params, false)
	if err != nil {
		return false, err
	}
	el, _ := res.(*mcp.ElicitResult)
	return el != nil && el.Action == "accept", nil
}

// Answer implements pipeline.Answerer: a backend's input requests become
// the run's, answered by the client's retry (all of a call's in one
// round).
func (r *liveRun) Answer(ctx context.Context, _ *pipeline.Call, requests mcp.InputRequestMap) (mcp.InputResponseMap, error) {
	type answer struct {
		id  string
		res mcp.InputResponse
		err error
	}
	answers := make(chan answer, len(requests))
	for id, req := range requests {
		go func() {
			res, err := r.put(ctx, req, false)
			answers <- answer{id, res, err}
		}()
	}
	out := make(mcp.InputResponseMap, len(requests))
	for range requests {
		a := <-answers
		if a.err != nil {
			return nil, a.err
		}
		if a.res == nil {
			return nil, fmt.Errorf("the client did not answer input request %q", a.id)
		}
		out[a.id] = a.res
	}
	return out, nil
}

// answer delivers a retry's input responses; requests left unanswered get
// nil (an approval is then declined).
func (r *liveRun) answer(responses mcp.InputResponseMap) {
	for id, k := range r.pending {
		k.reply <- responses[id]
	}
	r.pending = map[string]*ask{}
}

// roundTrips keeps runs between rounds, by requestState.
type roundTrips struct {
	mu        sync.Mutex
	parked    map[string]*liveRun
	approvals map[string]pendingApproval // passthrough calls

	// backendStates are requestStates backends issued for approved
	// passthrough calls, until they expire (inputrequests.go).
	backendStates map[string]time.Time
}

// The bounds of what waits for a client's answer. Past an owner's bound its
// oldest waiting entry is dropped (a parked run is cancelled); past the
// overall bound a new one is refused.
const (
	maxParkedPerOwner    = 8
	maxParkedRuns        = 256
	maxPendingPerOwner   = 32
	maxPendingApprovals  = 4096
	errTooManyParkedRuns = "call_tool_chain: too many runs are waiting for approval on this gateway; answer or abandon them and try again"
)

// park keeps r until its client retries, and returns the requestState that
// names it (unguessable, single use). It returns "" when the gateway
// already keeps maxParkedRuns runs; an owner's oldest parked run makes room
// for its new one past maxParkedPerOwner.
func (t *roundTrips) park(r *liveRun, state string) string {
	if state == "" {
		b := make([]byte, 16)
		_, _ = rand.Read(b)
		state = "run-" + hex.EncodeToString(b)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.sweepLocked()
	if t.parked == nil {
		t.parked = map[string]*liveRun{}
	}
	var oldest string
	mine := 0
	for s, p := range t.parked {
		if p.owner == r.owner {
			mine++
			if oldest == "" || p.parkedAt.Before(t.parked[oldest].parkedAt) {
				oldest = s
			}
		}
	}
	if mine >= maxParkedPerOwner {
		t.parked[oldest].cancel()
		delete(t.parked, oldest)
	} else if len(t.parked) >= maxParkedRuns {
		return ""
	}
	r.parkedAt = time.Now()
	t.parked[state] = r
	return state
}

// drop forgets r, parked under state, and reports whether it was still
// parked there (a retry did not take it first).
func (t *roundTrips) drop(state string, r *liveRun) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.parked[state] != r {
		return false
	}
	delete(t.parked, state)
	return true
}

// parkedAs reports whether r is parked under state.
func (t *roundTrips) parkedAs(state string, r *liveRun) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.parked[state] == r
}

// take returns and forgets the run parked under state, if owner parked it.
func (t *roundTrips) take(state, owner string) *liveRun {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.sweepLocked()
	r := t.parked[state]
	if r == nil || r.owner != owner {
		return nil
	}
	delete(t.parked, state)
	return r
}

// sweepLocked forgets runs whose client did not come back before the run's
// deadline (plus a minute to collect the result).
func (t *roundTrips) sweepLocked() {
	now := time.Now()
	for state, r := range t.parked {
		if now.After(r.deadline.Add(time.Minute)) {
			r.cancel()
			delete(t.parked, state)
		}
	}
	for state, p := range t.approvals {
		if now.After(p.expires) {
			delete(t.approvals, state)
		}
	}
	t.sweepBackendStatesLocked(now)
}

// Chain serves call_tool_chain for a client that answers
// approvals by retrying: a first call starts the run, a retry resumes it.
func (rs *Rounds) Chain(ctx context.Context, req *mcp.CallToolRequest, in Program) (*mcp.CallToolResult, error) {
	owner := rs.h.Owner(req)
	var run *liveRun
	if state := req.Params.RequestState; state != "" {
		if run = rs.trips.take(state, owner); run == nil {
			// Paused on another replica (or before this one restarted):
			// resumed here by replay, when durable.
			var gone *mcp.CallToolResult
			if run, gone = rs.resumeDurable(ctx, req, owner, state); run == nil {
				return gone, nil
			}
		} else if !rs.claimLocal(ctx, run, state) {
			run.cancel() // another replica resumed it
			return refused("call_tool_chain: unknown or expired requestState (the run it named was resumed already); run the program again"), nil
		} else {
			run.answer(req.Params.InputResponses)
		}
	} else {
		deadline := time.Now().Add(rs.h.RunTimeout(in))
		run = rs.startRun(ctx, req, owner, in, deadline, rs.runDurable(ctx, owner, in, deadline), nil)
	}
	select {
	case res := <-run.done:
		return res, nil
	case k := <-run.asks:
		requests := mcp.InputRequestMap{}
		for k != nil {
			run.nextID++
			id := fmt.Sprintf("input-%d", run.nextID)
			if _, ok := k.request.(*mcp.ElicitParams); ok {
				id = fmt.Sprintf("approval-%d", run.nextID)
			}
			run.pending[id], requests[id] = k, k.request
			select {
			case k = <-run.asks:
			default:
				k = nil
			}
		}
		durableState := rs.pauseDurable(ctx, run, requests)
		state := rs.trips.park(run, durableState)
		if state == "" {
			run.cancel()
			return refused(errTooManyParkedRuns), nil
		}
		if durableState != "" {
			go rs.watchTakeover(run, state)
		}
		return &mcp.CallToolResult{InputRequests: requests, RequestState: state}, nil
	case <-ctx.Done():
		run.cancel()
		return nil, ctx.Err()
	}
}

// startRun starts a run of in whose approvals are asked in rounds;
// durable, when set, journals it (and replays its journal first).
// preset answers the approvals a resumed run paused for (by request).
func (rs *Rounds) startRun(ctx context.Context, req *mcp.CallToolRequest, owner string, in Program, deadline time.Time,
	durable *tasks.Durable, preset map[string]mcp.InputResponse) *liveRun {
	runCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	run := &liveRun{owner: owner, deadline: deadline, asks: make(chan *ask),
		done: make(chan *mcp.CallToolResult, 1), cancel: cancel, ended: runCtx.Done(), pending: map[string]*ask{},
		canElicit: pipeline.CanElicit(req.Session), durable: durable, preset: preset}
	go func() {
		defer cancel()
		runCtx := pipeline.WithAnswerer(pipeline.WithApprover(runCtx, run), run)
		if durable != nil {
			runCtx = tasks.WithDurable(runCtx, durable)
			defer rs.endDurable(run)
		}
		run.done <- rs.h.Run(runCtx, req, in)
	}()
	return run
}

// Passthrough is the approval round of a passthrough call (the
// call has not started yet, so nothing waits): for a client that answers by
// retrying, the first call of a tool under approve returns the approval
// request as an inputRequest; the retry, with the same arguments and the
// requestState, carries the answer. It returns a result to send instead of
// calling, or the approver for the call.
func (rs *Rounds) Passthrough(req *mcp.CallToolRequest, call *pipeline.Call) (*mcp.CallToolResult, pipeline.Approver) {
	forwardClientInput(req, call) // the backend's, unless the round is the gateway's (below)
	if !usesRoundTrips(req.Session) || rs.h.Policy.Decide(call.Backend, call.Tool) != pipeline.NeedsApproval ||
		pipeline.Showable(call) != nil { // too large to show: the approval stage refuses it
		return nil, pipeline.ElicitApprover{Session: req.Session}
	}
	owner, key := rs.h.Owner(req), approvalKey(call)
	if state := req.Params.RequestState; state != "" {
		if rs.trips.takeBackendState(owner, key, state) {
			// The backend's next round of a call the person approved.
			return nil, Answered(true)
		}
		if !rs.trips.takeApproval(state, owner, key) {
			return refused("unknown or expired requestState (approvals are asked again for every call); call the tool again"), nil
		}
		call.InputResponses, call.RequestState = nil, "" // the gateway's round, not the backend's
		res, _ := req.Params.InputResponses[passthroughApprovalID].(*mcp.ElicitResult)
		return nil, Answered(res != nil && res.Action == "accept")
	}
	state := rs.trips.parkApproval(owner, key)
	if state == "" {
		return refused("too many approvals are pending on this gateway; answer them or try again later"), nil
	}
	return &mcp.CallToolResult{
		InputRequests: mcp.InputRequestMap{passthroughApprovalID: pipeline.ElicitParams(call)},
		RequestState:  state,
	}, nil
}

// passthroughApprovalID names the one input request of a passthrough call.
const passthroughApprovalID = "approval"

// approvalWait bounds how long a passthrough approval waits for the retry.
const approvalWait = 10 * time.Minute

// Answered is an approval the person already gave (or refused).
type Answered bool

// Approve implements pipeline.Approver.
func (a Answered) Approve(context.Context, *pipeline.Call) (bool, error) { return bool(a), nil }

// approvalKey ties an answer to the call it was asked for: a digest of the
// backend, the tool and the compacted arguments, so that what waits for an
// answer never holds the arguments themselves.
func approvalKey(c *pipeline.Call) string {
	var b bytes.Buffer
	if json.Compact(&b, c.Args) != nil {
		b.Reset()
		b.Write(c.Args)
	}
	h := sha256.New()
	for _, part := range []string{c.Backend, c.Tool} {
		fmt.Fprintf(h, "%d:%s", len(part), part)
	}
	h.Write(b.Bytes())
	return hex.EncodeToString(h.Sum(nil))
}

// pendingApproval is a passthrough approval asked and not yet answered.
type pendingApproval struct {
	owner, key string
	expires    time.Time
}

// parkApproval keeps a passthrough approval until the client's retry and
// returns its requestState; "" when maxPendingApprovals wait already. An
// owner's oldest pending approval makes room past maxPendingPerOwner.
func (t *roundTrips) parkApproval(owner, key string) string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	state := "approval-" + hex.EncodeToString(b)
	t.mu.Lock()
	defer t.mu.Unlock()
	t.sweepLocked()
	if t.approvals == nil {
		t.approvals = map[string]pendingApproval{}
	}
	var oldest string
	mine := 0
	for s, p := range t.approvals {
		if p.owner == owner {
			mine++
			if oldest == "" || p.expires.Before(t.approvals[oldest].expires) {
				oldest = s
			}
		}
	}
	if mine >= maxPendingPerOwner {
		delete(t.approvals, oldest)
	} else if len(t.approvals) >= maxPendingApprovals {
		return ""
	}
	t.approvals[state] = pendingApproval{owner: owner, key: key, expires: time.Now().Add(approvalWait)}
	return state
}

// takeApproval reports whether state names an approval owner asked for
// exactly this call, and forgets it.
func (t *roundTrips) takeApproval(state, owner, key string) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.sweepLocked()
	p, ok := t.approvals[state]
	if !ok || p.owner != owner || p.key != key {
		return false
	}
	delete(t.approvals, state)
	return true
}
