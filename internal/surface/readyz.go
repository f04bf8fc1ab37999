package surface

import (
	"encoding/json"
	"net/http"

	"github.com/isogate/isogate/internal/backend"
)

// readyz answers 200 when every enabled backend is healthy or has a cached
// tool list, else 503 naming the others. Either way name_collisions lists
// the tool and prompt names backends share (they do not make it unready)
// and repointed_names the plain names that now reach another backend than
// before (a reload, a backend coming or going).
// With server.metrics_auth, a request without the token gets the status
// code and {"ready": …} only, and one with the token of a principal
// outside server.auth.admins (when admins are named) the type checker's
// mode, state and restarts only, and the count of stale saved programs
// without their names.
func (sf *Surface) readyz(w http.ResponseWriter, r *http.Request) {
	type notReady struct {
		Name      string `json:"name"`
		State     string `json:"state"`
		LastError string `json:"last_error,omitempty"`
	}
	body := struct {
		Ready          bool            `json:"ready"`
		Backends       int             `json:"backends"`
		NotReady       []notReady      `json:"not_ready"`
		NameCollisions []NameCollision `json:"name_collisions"`
		Repointed      []Repoint       `json:"repointed_names"`
		Sandbox        *SandboxReport  `json:"sandbox,omitempty"`
		// Programs are the saved programs, stale ones named (they do
		// not make the gateway unready: programsReadiness says why).
		Programs *programsReadiness `json:"programs,omitempty"`
		// Store is whether the durable store answers (nor does it make
		// the gateway unready: storeReadiness says why).
		Store *storeReadiness `json:"store,omitempty"`
	}{Ready: true, NotReady: []notReady{}, NameCollisions: sf.collisions.list(), Sandbox: sf.sandboxReport(),
		Programs: sf.programsReadiness(r.Context()), Store: sf.storeReadiness(r.Context())}
	body.Repointed, _ = sf.Repointed()
	for _, st := range sf.manager.Status() {
		body.Backends++
		if st.State == backend.StateHealthy || (st.ToolsCached && st.ToolCount > 0) {
			continue
		}
		body.Ready = false
		body.NotReady = append(body.NotReady, notReady{st.Name, st.State.String(), st.LastError})
	}
	w.Header().Set("Content-Type", "application/json")
	if !body.Ready {
		w.WriteHeader(http.StatusServiceUnavailable)
	}
	if sf.opts.MetricsAuth {
		p, ok := sf.tokenPresented(r)
		if !ok {
			_ = json.NewEncoder(w).Encode(struct {
				Ready bool `json:"ready"`
			}{body.Ready})
			return
		}
		// The checker's process details (its worker's PID, the cache
		// file's path, its last error) are for server.auth.admins, as in
		// isogate://stats, once admins are named.
		if admins := sf.opts.Auth.Admins; len(admins) > 0 && !p.Matches(admins) {
			body.Sandbox = body.Sandbox.brief()
			body.Programs = body.Programs.brief()
			body.Store = body.Store.brief()
		}
	}
	_ = json.NewEncoder(w).Encode(body)
}

// NameCollisions lists the tool and prompt names backends share, as
// /readyz and isogate://backends report them.
func (sf *Surface) NameCollisions() []NameCollision { return sf.collisions.list() }
