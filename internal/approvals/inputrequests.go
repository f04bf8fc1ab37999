package approvals

import (
	"errors"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/isogate/isogate/internal/clientreq"
	"github.com/isogate/isogate/internal/pipeline"
)

// A backend tool that needs input from the client (elicitation, sampling,
// roots) answers a 2026-07-28 call with an InputRequiredResult (SEP-2322):
// inputRequests plus an opaque requestState. Passthrough hands that result
// to the client unchanged (the backend sessions do not answer input
// requests themselves: MultiRoundTrip is disabled in backend/connect.go),
// and the client's retry, its inputResponses and the untouched
// requestState, goes to the backend, which continues. Prompts and resource
// reads do the same (surface/aggregate.go).
//
// The backend learns what the client can do from the client's own
// per-request capabilities (_meta io.modelcontextprotocol/clientCapabilities),
// not the gateway's: a backend tool that needs sampling from a client
// without it refuses with -32021, and that JSON-RPC error, like every error
// a backend answers a 2026-07-28 client's call with, reaches the client as
// the backend sent it.
//
// isogate's own approval round of a passthrough call uses requestState too
// (approvals.go: "approval-<hex>", kept by the gateway). Any other
// requestState is the backend's: forwarded untouched, never interpreted.
// For a tool under approval, the gateway accepts a backend's requestState
// only when that backend issued it for the same client and the same
// arguments after the person approved the call, so an invented state cannot
// skip the approval.

// forwardClientInput copies what a client's request says to the backend
// about the client into call: its per-request capabilities (2026-07-28),
// and the inputResponses and requestState of a retry. The caller has
// checked that the requestState is not the gateway's own.
func forwardClientInput(req *mcp.CallToolRequest, call *pipeline.Call) {
	p := req.Params
	if caps, ok := p.Meta[mcp.MetaKeyClientCapabilities]; ok {
		if call.Meta == nil {
			call.Meta = mcp.Meta{}
		}
		call.Meta[mcp.MetaKeyClientCapabilities] = caps
	}
	call.InputResponses = p.InputResponses
	call.RequestState = p.RequestState
}

// BackendProtocolError returns the JSON-RPC error a backend answered the
// call with, for a client that takes it as it is (2026-07-28 on: a
// missing capability, -32021, or a rejected requestState, -32602, are the
// client's to see); nil otherwise.
func BackendProtocolError(req *mcp.CallToolRequest, err error) error {
	var rpc *jsonrpc.Error
	if !clientreq.RoundTripEra(req.Session) || !errors.As(err, &rpc) {
		return nil
	}
	var refused *pipeline.Error
	if errors.As(err, &refused) {
		return nil
	}
	return &jsonrpc.Error{Code: rpc.Code, Message: rpc.Message, Data: rpc.Data}
}

// NoteBackendRound remembers the requestState a backend returned for an
// approved call of a tool under approval, so that the client's retry
// continues without being asked again (see Rounds.Passthrough).
func (rs *Rounds) NoteBackendRound(req *mcp.CallToolRequest, call *pipeline.Call, res *mcp.CallToolResult) {
	if res == nil || res.RequestState == "" || res.InputRequests == nil {
		return
	}
	if !usesRoundTrips(req.Session) || rs.h.Policy.Decide(call.Backend, call.Tool) != pipeline.NeedsApproval {
		return
	}
	rs.trips.parkBackendState(rs.h.Owner(req), approvalKey(call), res.RequestState)
}

// backendStateKey names a backend's requestState for one client and call.
func backendStateKey(owner, key, state string) string {
	return owner + "\x00" + key + "\x00" + state
}

// parkBackendState remembers a requestState the backend issued for an
// approved call.
func (t *roundTrips) parkBackendState(owner, key, state string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.sweepLocked()
	if t.backendStates == nil {
		t.backendStates = map[string]time.Time{}
	}
	t.backendStates[backendStateKey(owner, key, state)] = time.Now().Add(approvalWait)
}

// takeBackendState reports whether the backend issued state for exactly
// this approved call of owner, and forgets it.
func (t *roundTrips) takeBackendState(owner, key, state string) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.sweepLocked()
	k := backendStateKey(owner, key, state)
	if _, ok := t.backendStates[k]; !ok {
		return false
	}
	delete(t.backendStates, k)
	return true
}

// sweepBackendStatesLocked forgets backend states past their wait.
func (t *roundTrips) sweepBackendStatesLocked(now time.Time) {
	for k, exp := range t.backendStates {
		if now.After(exp) {
			delete(t.backendStates, k)
		}
	}
}
