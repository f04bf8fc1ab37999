package surface

import (
	"net/http"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/isogate/isogate/internal/authn"
)

// TestOwnerIsThePrincipal: a principal owns what it makes whatever its
// session; without authentication an HTTP caller is the one local
// principal and an in-process or stdio caller the process. With
// authentication on, an HTTP request without a principal (requireAuth lets
// none through) fails closed: an owner of its own each time, never the
// local principal's, never another request's.
func TestOwnerIsThePrincipal(t *testing.T) {
	open := &Surface{tokens: authn.NewStatic(nil, ""), processOwner: "process-test"}
	guarded := &Surface{tokens: authn.NewStatic(nil, "a-token-of-sixteen-chars"), processOwner: "process-test"}

	if got := guarded.httpOwner(&authn.Principal{Name: "alice"}); got != "principal:alice" {
		t.Errorf("alice's owner key %q, want principal:alice", got)
	}
	if got := open.httpOwner(nil); got != localOwner {
		t.Errorf("without auth an HTTP caller owns %q, want the local principal %q", got, localOwner)
	}
	a, b := guarded.httpOwner(nil), guarded.httpOwner(nil)
	if a == localOwner || a == b || a == "" {
		t.Errorf("with auth on, requests without a principal own %q and %q: want a fresh owner each", a, b)
	}

	httpReq := &mcp.CallToolRequest{Extra: &mcp.RequestExtra{Header: http.Header{"Authorization": {"Bearer anything"}}}}
	if got := open.ownerOf(httpReq); got != localOwner {
		t.Errorf("without auth an HTTP request with an unchecked Authorization header owns %q, want %q", got, localOwner)
	}
	if got := open.ownerOf(&mcp.CallToolRequest{}); got != "process-test" {
		t.Errorf("an in-process request owns %q, want the process's %q", got, "process-test")
	}
	if got := open.ownerOf(nil); got != "process-test" {
		t.Errorf("no request owns %q, want the process's", got)
	}
}
