package clientreq

import (
	"context"
	"log/slog"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/isogate/isogate/internal/pipeline"
)

// serverSession is a live server session (in-memory transports) for
// Begin to file calls under.
func serverSession(t *testing.T) *mcp.ServerSession {
	t.Helper()
	ctx := context.Background()
	ct, st := mcp.NewInMemoryTransports()
	ss, err := mcp.NewServer(&mcp.Implementation{Name: "s", Version: "1"}, nil).Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close(); ss.Close() })
	return ss
}

// sink keeps what the allocation counts measure on the heap.
var sink mcp.Meta

// TestBeginWithoutProgressTokenCosts: a passthrough call whose client
// asked for no progress is filed and unfiled with one allocation (its
// InFlight) beside the _meta it sends the backend (the log level), and
// one whose _meta the gateway already built (a 2026-07-28 client's
// capabilities) gets the log level added there, not in a copy. (Red
// before: 5 and 5 allocations: the _meta was copied into a new map, and
// the end of the call was a closure.)
func TestBeginWithoutProgressTokenCosts(t *testing.T) {
	f := New(slog.New(slog.DiscardHandler))
	ctx := context.Background()
	req := &mcp.CallToolRequest{Session: serverSession(t), Params: &mcp.CallToolParamsRaw{Name: "echo"}}
	newMap := testing.AllocsPerRun(200, func() { sink = mcp.Meta{mcp.MetaKeyLogLevel: "debug"} })
	if n := testing.AllocsPerRun(200, func() {
		call := &pipeline.Call{Backend: "b", Tool: "echo"}
		c := f.Begin(ctx, req, call)
		if call.Meta[mcp.MetaKeyLogLevel] == nil || call.Meta["progressToken"] != nil {
			t.Fatalf("the backend's _meta: %v", call.Meta)
		}
		c.End()
	}); n > 1+newMap {
		t.Errorf("Begin and End of a call without _meta: %.0f allocations, want 1 beside the map's %.0f", n, newMap)
	}
	meta := mcp.Meta{mcp.MetaKeyClientCapabilities: map[string]any{}}
	if n := testing.AllocsPerRun(200, func() {
		call := &pipeline.Call{Backend: "b", Tool: "echo", Meta: meta}
		c := f.Begin(ctx, req, call)
		if call.Meta[mcp.MetaKeyLogLevel] == nil || call.Meta[mcp.MetaKeyClientCapabilities] == nil {
			t.Fatalf("the backend's _meta: %v", call.Meta)
		}
		c.End()
	}); n > 1 {
		t.Errorf("Begin and End of a call with the gateway's _meta: %.0f allocations, want 1", n)
	}
	if len(f.calls["b"]) != 0 {
		t.Errorf("calls still filed after End: %v", f.calls["b"])
	}
}
