package backend

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// roots answers roots/list with its name as the one root's URI.
type roots struct {
	ClientRequests
	name string
}

func (r roots) ListRoots(context.Context, string, *mcp.ListRootsParams) (*mcp.ListRootsResult, error) {
	return &mcp.ListRootsResult{Roots: []*mcp.Root{{URI: r.name}}}, nil
}

// TestSharedSessionAttribution: the shared session gives a backend's
// request to a Caller only when all the calls in flight are that Caller's;
// with a call without a Caller among them it asks the others (which see
// every client's calls), and with calls of two Callers or none it refuses.
func TestSharedSessionAttribution(t *testing.T) {
	c := &conn{}
	alice := &Caller{Key: "alice", Requests: roots{name: "alice"}}
	bob := &Caller{Key: "bob", Requests: roots{name: "bob"}}
	a := attributed{c: c, log: slog.New(slog.NewTextHandler(io.Discard, nil)), name: "b", others: roots{name: "others"}}
	ask := func() string {
		res, err := a.ListRoots(context.Background(), "b", nil)
		var rpc *jsonrpc.Error
		if errors.As(err, &rpc) && rpc.Code == jsonrpc.CodeInternalError {
			return "refused"
		}
		if err != nil {
			t.Fatal(err)
		}
		return res.Roots[0].URI
	}
	if got := ask(); got != "refused" {
		t.Errorf("no call in flight: %s", got)
	}
	leaveAlice := c.enter(alice)
	leaveAlice2 := c.enter(alice)
	if got := ask(); got != "alice" {
		t.Errorf("alice's calls in flight: %s", got)
	}
	leaveAnon := c.enter(nil) // a client without a session of its own
	if got := ask(); got != "others" {
		t.Errorf("alice's calls and one without a Caller: %s, want the others to decide", got)
	}
	leaveAnon()
	leaveBob := c.enter(bob)
	if got := ask(); got != "refused" {
		t.Errorf("alice's and bob's calls in flight: %s", got)
	}
	leaveAlice()
	leaveAlice2()
	if got := ask(); got != "bob" {
		t.Errorf("bob's call alone: %s", got)
	}
	leaveBob()
}
