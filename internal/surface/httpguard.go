package surface

import (
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

	"github.com/isogate/isogate/internal/httpbody"
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

// guardHTTP puts the Host check (checkHost) and then the Origin check
// (checkOrigin) in front of h: a request refused by either is answered
// 403 before h, or any handler within it, sees it.
func (sf *Surface) guardHTTP(h http.Handler) http.Handler {
	return checkHost(sf.opts.AllowedHosts, sf.authEnabled, checkOrigin(sf.opts.AllowedOrigins, h))
}

// checkHost answers 403 to a request whose Host header names a host the
// gateway is not known by, so that a page whose name was rebound to the
// gateway's address (DNS rebinding) reads and does nothing. A Host passes
// when it is
//   - listed in allowed (server.allowed_hosts: "name" for any port,
//     "name:port" for that port only), or
//   - a loopback name (localhost, 127.0.0.0/8, [::1]) or the address the
//     connection arrived at, with or without a port;
//
// any other Host passes only when allowed is empty, the connection did
// not arrive at a loopback address and callers must authenticate
// (auth): a gateway on a non-loopback listener with a token, reached by
// whatever name, as before server.allowed_hosts. Without a local address
// to judge by (a handler not served by net/http), only the first two
// rules apply.
func checkHost(allowed []string, auth func() bool, next http.Handler) http.Handler {
	set := map[string]bool{}
	for _, h := range allowed {
		set[strings.ToLower(strings.TrimSpace(h))] = true
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !hostAllowed(r, set, auth) {
			reject(w, fmt.Sprintf("host %q is not allowed (server.allowed_hosts)", r.Host), http.StatusForbidden)
			return
		}
		next.ServeHTTP(w, r)
	})
}

func hostAllowed(r *http.Request, allowed map[string]bool, auth func() bool) bool {
	host := strings.ToLower(r.Host)
	name := host
	if h, _, err := net.SplitHostPort(host); err == nil {
		name = h
	} else if strings.HasPrefix(name, "[") && strings.HasSuffix(name, "]") {
		name = name[1 : len(name)-1] // [::1] without a port
	}
	if host != "" && (allowed[host] || allowed[name]) {
		return true
	}
	if isLoopback(name) {
		return true
	}
	local, _ := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	if local == nil {
		return false
	}
	localHost, _, err := net.SplitHostPort(local.String())
	if err != nil {
		return false
	}
	if localIP, ip := net.ParseIP(localHost), net.ParseIP(name); localIP != nil && ip != nil && localIP.Equal(ip) {
		return true // the address itself: no name to rebind
	}
	return len(allowed) == 0 && !isLoopback(localHost) && auth()
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
		r.Body = httpbody.New(body) // the layers after this one look at it in place
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
