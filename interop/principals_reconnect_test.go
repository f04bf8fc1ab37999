package interop

import (
	"strings"
	"testing"
)

// reconnectReport is the report of scripts/principals_reconnect.mjs.
type reconnectReport struct {
	Sessions []string
	Stored   struct{ Run, Result string }
	Again    map[string]string
	Other    struct{ Got, Unknown map[string]string }
}

// reconnect runs principals_reconnect.mjs against gw and checks what every
// case shares: the first session stored a run record and a result, each
// reader had a session of its own, and the caller's new session read
// everything it made in the first one.
func reconnect(t *testing.T, gw *httpGateway, args ...string) reconnectReport {
	t.Helper()
	var r reconnectReport
	runNodeInto(t, &r, "principals_reconnect.mjs", append([]string{"--http", gw.url}, args...)...)
	if r.Stored.Run == "" || r.Stored.Result == "" {
		t.Fatalf("the first session's program left no run id or result URI: %+v", r.Stored)
	}
	seen := map[string]bool{}
	for _, s := range r.Sessions {
		if s == "" || seen[s] {
			t.Fatalf("sessions %q: want one new session id per connection", r.Sessions)
		}
		seen[s] = true
	}
	if len(r.Again) != 5 {
		t.Fatalf("the new session's reads cover %d ways in, want 5: %v", len(r.Again), r.Again)
	}
	for what, got := range r.Again {
		if !strings.HasPrefix(got, "read: ") || (what != "read_result-range" && !strings.Contains(got, "first-secret")) {
			t.Errorf("reading what the first session made, from a new session with the same credentials, %s: %.300s", what, got)
		}
	}
	return r
}

// TestTypeScriptSDKPrincipalOwnsAcrossSessions: alice, with the official
// TypeScript SDK client, runs a program that stores a big result, ends her
// session, and connects again with the same token (as every reconnect, and
// the Inspector CLI on every call, does): her new session reads the run
// record and the stored result every way a client can. bob, with his own
// token, reads neither: each answer is exactly the one an unknown id gets.
func TestTypeScriptSDKPrincipalOwnsAcrossSessions(t *testing.T) {
	t.Parallel()
	gw := principalsGateway(t)
	r := reconnect(t, gw, "--first", principalTokens["alice"], "--other", principalTokens["bob"])
	if len(r.Other.Got) != 5 {
		t.Fatalf("bob's attempt covers %d ways in, want 5: %v", len(r.Other.Got), r.Other.Got)
	}
	for what, got := range r.Other.Got {
		if !strings.HasPrefix(got, "error: ") || got != r.Other.Unknown[what] || strings.Contains(got, "secret") {
			t.Errorf("bob reading alice's %s: %.200q; want what an id naming nothing gets: %q", what, got, r.Other.Unknown[what])
		}
	}
}

// TestTypeScriptSDKLocalPrincipalWithoutAuth: an HTTP gateway on loopback
// without server.auth has one principal, the local one: what one session
// makes, another session (the same client reconnecting, or another client
// without a token) reads, as docs/auth.md says.
func TestTypeScriptSDKLocalPrincipalWithoutAuth(t *testing.T) {
	t.Parallel()
	gw := gateways.http(t, "")
	r := reconnect(t, gw, "--other", "")
	if len(r.Other.Got) != 5 {
		t.Fatalf("the other client's reads cover %d ways in, want 5: %v", len(r.Other.Got), r.Other.Got)
	}
	for what, got := range r.Other.Got {
		if !strings.HasPrefix(got, "read: ") || (what != "read_result-range" && !strings.Contains(got, "first-secret")) {
			t.Errorf("another local client reading the first session's %s: %.300s", what, got)
		}
	}
}
