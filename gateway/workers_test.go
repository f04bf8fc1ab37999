package gateway

import (
	"net/http"
	"testing"

	"github.com/isogate/isogate/config"
	"github.com/isogate/isogate/v8sandbox/procpool"
)

// TestWorkersNeverMixPrincipals: through the gateway (HTTP, static tokens,
// process isolation), alice's, bob's and carol's programs run on sandbox
// worker processes of their own: each worker is bound to the principal
// whose program it ran, and carol's first program gets a fresh worker
// rather than one alice or bob used (theirs is parked for them).
func TestWorkersNeverMixPrincipals(t *testing.T) {
	h := newHTTPGateway(t, func(c *config.Config) {
		c.Sandbox.Isolation = config.IsolationProcess
		c.Sandbox.MaxConcurrent = 8 // two workers of four slots
		c.Server.Auth.Mode = config.AuthToken
		c.Server.Auth.Tokens = map[string]config.StaticToken{
			"alice": {Token: "alice-token"}, "bob": {Token: "bob-token"}, "carol": {Token: "carol-token"}}
	})
	pool, ok := h.g.app.Runner.(*procpool.Pool)
	if !ok {
		t.Fatalf("process isolation runs on %T, want *procpool.Pool", h.g.app.Runner)
	}
	// owners maps each live worker's pid to the principal it is bound to.
	owners := func() map[int]string {
		out := map[int]string{}
		for _, w := range pool.Stats().Workers {
			if w.Bound {
				out[w.PID] = w.Principal
			}
		}
		return out
	}
	served := map[int]string{} // every worker that ran a program, and for whom
	run := func(name string) {
		t.Helper()
		cs := h.connect(t, &http.Client{Transport: bearer{name + "-token"}})
		// A loop: a program code mode runs in V8, not on its fast path.
		chainOK(t, cs, `let n = 0; for (const x of [1, 2]) n += x; return await local.echo({who: "`+name+`", n})`)
		for pid, owner := range owners() {
			if prev, ok := served[pid]; ok && prev != owner {
				t.Errorf("worker %d served %s, now %s", pid, prev, owner)
			}
			served[pid] = owner
		}
	}
	run("alice")
	run("bob")
	got := owners()
	var alices, bobs int
	for _, owner := range got {
		switch owner {
		case "alice":
			alices++
		case "bob":
			bobs++
		default:
			t.Errorf("a worker is bound to %q, want alice or bob: %v", owner, got)
		}
	}
	if alices != 1 || bobs != 1 {
		t.Errorf("workers bound %v, want one to alice and one to bob", got)
	}
	run("carol")
	run("alice")
	run("carol")
	// carol's worker came from elsewhere than alice's or bob's: a worker
	// of theirs left its slot (parked for its principal, idle workers on
	// by default) and carol got a fresh one (checked above: no worker
	// changed owner).
	if st := pool.Stats(); st.Parked == 0 {
		t.Errorf("no worker left its slot for carol: %+v", st)
	}
	if _, text := h.get(t, "/metrics"); func() bool {
		v, ok := sample(text, "isogate_sandbox_workers", "state", "parked")
		return !ok || v < 1
	}() {
		t.Errorf("isogate_sandbox_workers{state=\"parked\"} does not count the worker parked for carol")
	}
}
