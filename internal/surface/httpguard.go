package surface

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// maxBodyBytes bounds an MCP request body: the go-sdk's own default,
// passed to it explicitly (serve.go) so that this is the one limit in
// force, checked before the go-sdk reads the body (docs/security.md).
const maxBodyBytes = mcp.DefaultMaxRequestBodyBytes

// reject answers with an error and closes the connection without reading
// the request body (net/http would otherwise drain it before replying).
func reject(w http.ResponseWriter, msg string, code int) {
	w.Header().Set("Connection", "close")
	http.Error(w, msg, code)
}

// checkOrigin answers 403 to a request whose Origin is foreign: not in
// allowed, not the request's own host, and not a loopback origin arriving
// on a loopback listener. Requests without Origin (non-browser clients)
// pass.
func checkOrigin(allowed []string, next http.Handler) http.Handler {
	set := map[string]bool{}
	for _, o := range allowed {
		set[normalizeOrigin(o)] = true
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if o := r.Header.Get("Origin"); o != "" && !originAllowed(r, o, set) {
			reject(w, fmt.Sprintf("origin %q is not allowed (server.allowed_origins)", o), http.StatusForbidden)
			return
		}
		next.ServeHTTP(w, r)
	})
}

func normalizeOrigin(o string) string {
	return strings.ToLower(strings.TrimSuffix(strings.TrimSpace(o), "/"))
}

func originAllowed(r *http.Request, origin string, allowed map[string]bool) bool {
	if allowed[normalizeOrigin(origin)] {
		return true
	}
	u, err := url.Parse(origin)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return false // includes the opaque origin "null"
	}
	if strings.EqualFold(u.Host, r.Host) {
		return true // same origin
	}
	local, _ := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	if local == nil {
		return false
	}
	host, _, err := net.SplitHostPort(local.String())
	return err == nil && isLoopback(host) && isLoopback(u.Hostname())
}

// readBody reads an authenticated request's body within timeout (a slow
// body no longer holds a connection open indefinitely) and up to
// maxBodyBytes, then hands the buffered body on. Long responses are not
// affected: the read deadline is lifted once the body is in.
func readBody(timeout time.Duration, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Body == nil || r.Body == http.NoBody {
			next.ServeHTTP(w, r)
			return
		}
		rc := http.NewResponseController(w)
		_ = rc.SetReadDeadline(time.Now().Add(timeout))
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBodyBytes))
		_ = rc.SetReadDeadline(time.Time{})
		if err != nil {
			var tooBig *http.MaxBytesError
			switch {
			case errors.As(err, &tooBig):
				reject(w, fmt.Sprintf("request body exceeds %d bytes", tooBig.Limit), http.StatusRequestEntityTooLarge)
			case errors.Is(err, os.ErrDeadlineExceeded):
				reject(w, "request body not received in time", http.StatusRequestTimeout)
			default:
				reject(w, "reading request body: "+err.Error(), http.StatusBadRequest)
			}
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		next.ServeHTTP(w, r)
	})
}

// SetAuthToken makes token the bearer token HTTP clients must send from
// the next request on (server.auth_token rotated by a reload): the old one
// stops working at once. A token cannot be removed this way (a listener
// may be exposed because it had one): that needs a restart.
func (sf *Surface) SetAuthToken(token string) error {
	if token == "" && sf.AuthToken() != "" {
		return errors.New("server.auth_token cannot be removed by a reload; restart isogate to serve without a token")
	}
	sf.authToken.Store(&token)
	sf.tokens.SetLegacy(token)
	return nil
}

// AuthToken is the bearer token HTTP clients must send now ("" for none).
func (sf *Surface) AuthToken() string {
	if t := sf.authToken.Load(); t != nil {
		return *t
	}
	return ""
}
