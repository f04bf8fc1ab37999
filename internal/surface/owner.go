package surface

import (
	"crypto/rand"
	"encoding/hex"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/isogate/isogate/internal/authn"
	"github.com/isogate/isogate/internal/resultstore"
)

// localOwner is the owner key of every caller of an HTTP gateway without
// authentication (server.auth mode none, which serves loopback only): one
// local principal, whatever its session, replica or Authorization header
// (which nothing checks then).
const localOwner = "local"

// ownerOf is who owns what req makes: stored results, run records, tasks,
// runs paused for approval, and the caller's isogate://stats. It is the
// caller's principal, in session and stateless mode alike, so that a new
// session of the same principal (a reconnect, another replica) finds what
// an earlier one made and no other principal does. Without a principal:
// over HTTP the local principal (httpOwner); otherwise (stdio, in-memory)
// the process. The key (resultstore.OwnerKey) charges the result store's
// budget to the principal.
func (sf *Surface) ownerOf(req mcp.Request) string {
	if p := principalOf(req); p != nil {
		return resultstore.OwnerKey(p.Owner(), "")
	}
	if req != nil {
		if extra := req.GetExtra(); extra != nil && extra.Header != nil {
			return sf.httpOwner(nil)
		}
	}
	return sf.processOwner
}

// httpOwner is the owner key of an HTTP request authenticated as p (nil:
// none). Without authentication configured that is the local principal.
// With authentication on, every request carries its principal
// (requireAuth); were one to arrive without, it gets an owner of its own
// that nobody else has: it reads nothing another made, and nobody reads
// what it makes.
func (sf *Surface) httpOwner(p *authn.Principal) string {
	if p != nil {
		return resultstore.OwnerKey(p.Owner(), "")
	}
	if sf.authEnabled() {
		return resultstore.OwnerKey("unauthenticated-"+randomHex(16), "")
	}
	return localOwner
}

// randomHex is n random bytes in hex.
func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
