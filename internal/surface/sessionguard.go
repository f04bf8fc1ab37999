package surface

import (
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/auth"
)

// sessionGuard answers a request naming a session that another principal
// opened exactly as one naming no session: 404 "session not found". The
// go-sdk refuses such a request too, but with 403 "session user
// mismatch", which tells that the session exists; and the gateway's own
// tasks/* answers (tasks.Tasks.HTTP) only asked whether the session exists.
func (sf *Surface) sessionGuard(next http.Handler) http.Handler {
	if sf.opts.Stateless {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if id := r.Header.Get("Mcp-Session-Id"); id != "" {
			var user string
			if info := auth.TokenInfoFromContext(r.Context()); info != nil {
				user = info.UserID
			}
			if sf.sessions.foreign(id, user) {
				http.Error(w, "session not found", http.StatusNotFound)
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

// foreign reports whether a session with that id is open and was opened
// by another user than user.
func (t *sessionTracker) foreign(id, user string) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	use, ok := t.byID[id]
	return ok && use.user != user
}
