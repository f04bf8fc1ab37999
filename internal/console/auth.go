package console

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Cookie names.
const (
	sessionCookie = "isogate_console"
	loginCookie   = "isogate_console_login"
	// maxSessions bounds the console sessions kept at once.
	maxSessions = 1000
)

// visitor is who a console request comes from.
type visitor struct {
	// Principal is the admin's name ("local" without authentication).
	Principal string
	// CSRF is the token forms must carry ("" for a bearer request, which
	// carries no ambient credential).
	CSRF string
	// sessionID is the session cookie's value, if any.
	sessionID string
}

// session is a browser's sign-in, kept server-side.
type session struct {
	principal string
	csrf      string
	expires   time.Time
}

type sessions struct {
	ttl time.Duration
	mu  sync.Mutex
	m   map[string]*session
}

func newSessions(ttl time.Duration) *sessions { return &sessions{ttl: ttl, m: map[string]*session{}} }

// randomToken is 32 random bytes in hex.
func randomToken() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// create starts a session for principal and returns its id.
func (s *sessions) create(principal string) (string, *session) {
	id, ss := randomToken(), &session{principal: principal, csrf: randomToken(), expires: time.Now().Add(s.ttl)}
	s.mu.Lock()
	defer s.mu.Unlock()
	now := time.Now()
	for k, v := range s.m {
		if now.After(v.expires) {
			delete(s.m, k)
		}
	}
	if len(s.m) >= maxSessions { // the one closest to expiry makes room
		var oldest string
		for k, v := range s.m {
			if oldest == "" || v.expires.Before(s.m[oldest].expires) {
				oldest = k
			}
		}
		delete(s.m, oldest)
	}
	s.m[id] = ss
	return id, ss
}

func (s *sessions) get(id string) *session {
	s.mu.Lock()
	defer s.mu.Unlock()
	ss := s.m[id]
	if ss == nil || time.Now().After(ss.expires) {
		delete(s.m, id)
		return nil
	}
	return ss
}

func (s *sessions) end(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.m, id)
}

// handlerFunc is a console handler for a known visitor.
type handlerFunc func(w http.ResponseWriter, r *http.Request, v *visitor)

// guard lets admins through: by bearer token, or by session cookie (then
// a POST must carry the session's CSRF token). Without authentication
// only loopback clients are served. Others are sent to the sign-in page
// (GET of a page), or answered 401 or 403.
func (c *Console) guard(next handlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !sameOrigin(r) {
			c.refuse(w, r, http.StatusForbidden, "cross-origin request")
			return
		}
		v, status := c.visitorOf(w, r)
		switch status {
		case http.StatusOK:
		case http.StatusUnauthorized:
			if r.Method == http.MethodGet && r.URL.Path != "/console/events" {
				http.Redirect(w, r, "/console/login", http.StatusSeeOther)
				return
			}
			c.refuse(w, r, status, "sign in first")
			return
		default:
			c.refuse(w, r, status, "not a console admin")
			return
		}
		if r.Method == http.MethodPost && v.CSRF != "" &&
			subtle.ConstantTimeCompare([]byte(r.PostFormValue("csrf")), []byte(v.CSRF)) != 1 {
			c.refuse(w, r, http.StatusForbidden, "missing or wrong CSRF token")
			return
		}
		next(w, r, v)
	})
}

// visitorOf authenticates r: 200 with the visitor, 401 (nobody signed
// in) or 403 (not an admin, or not loopback without authentication).
func (c *Console) visitorOf(w http.ResponseWriter, r *http.Request) (*visitor, int) {
	if scheme, token, ok := strings.Cut(r.Header.Get("Authorization"), " "); ok && strings.EqualFold(scheme, "Bearer") && c.opts.Verify != nil {
		p, err := c.opts.Verify(r.Context(), strings.TrimSpace(token), r)
		if err != nil || p == nil {
			return nil, http.StatusUnauthorized
		}
		if !p.Matches(c.opts.Admins) {
			return nil, http.StatusForbidden
		}
		return &visitor{Principal: p.Name}, http.StatusOK
	}
	if c.opts.Verify == nil && !loopbackClient(r) {
		return nil, http.StatusForbidden
	}
	if ck, err := r.Cookie(sessionCookie); err == nil {
		if ss := c.sessions.get(ck.Value); ss != nil {
			return &visitor{Principal: ss.principal, CSRF: ss.csrf, sessionID: ck.Value}, http.StatusOK
		}
	}
	if c.opts.Verify == nil { // no authentication: a loopback browser gets a session at once
		id, ss := c.sessions.create("local")
		c.setSessionCookie(w, r, id)
		return &visitor{Principal: ss.principal, CSRF: ss.csrf, sessionID: id}, http.StatusOK
	}
	return nil, http.StatusUnauthorized
}

// loopbackClient reports whether r comes from this machine.
func loopbackClient(r *http.Request) bool {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return false
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// sameOrigin refuses a request whose Origin (sent by browsers on POST
// and EventSource) is another site than the one it is addressed to.
func sameOrigin(r *http.Request) bool {
	o := r.Header.Get("Origin")
	if o == "" {
		return true
	}
	u, err := url.Parse(o)
	return err == nil && strings.EqualFold(u.Host, r.Host)
}

func (c *Console) setSessionCookie(w http.ResponseWriter, r *http.Request, id string) {
	http.SetCookie(w, &http.Cookie{Name: sessionCookie, Value: id, Path: "/console", HttpOnly: true,
		Secure: r.TLS != nil, SameSite: http.SameSiteStrictMode, MaxAge: int(c.opts.SessionTTL.Seconds())})
}

// refuse answers status with a short page, and logs it.
func (c *Console) refuse(w http.ResponseWriter, r *http.Request, status int, why string) {
	c.logger.Warn("console: request refused", slog.Int("status", status), slog.String("reason", why),
		slog.String("path", r.URL.Path), slog.String("remote", r.RemoteAddr))
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	_ = c.pages.render(w, "refused", map[string]any{"Status": status, "Reason": why})
}

// loginPage asks for the token once; its form carries a CSRF token tied
// to a short-lived cookie (no session exists yet).
func (c *Console) loginPage(w http.ResponseWriter, r *http.Request) {
	if c.opts.Verify == nil {
		http.Redirect(w, r, "/console/overview", http.StatusSeeOther)
		return
	}
	csrf := randomToken()
	http.SetCookie(w, &http.Cookie{Name: loginCookie, Value: csrf, Path: "/console/login", HttpOnly: true,
		Secure: r.TLS != nil, SameSite: http.SameSiteStrictMode, MaxAge: 600})
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	_ = c.pages.render(w, "login", map[string]any{"CSRF": csrf, "Error": loginErrors[r.URL.Query().Get("error")]})
}

// loginErrors are the messages the sign-in page shows, chosen by the code
// in its URL (/console/login?error=<code>); an unknown code shows none,
// so no text from a URL ever reaches the page.
var loginErrors = map[string]string{
	errInvalidToken: "That token was not accepted.",
}

// errInvalidToken is the sign-in page's code for a token that was refused.
const errInvalidToken = "invalid_token"

// login checks the token once and starts a session for an admin; the
// token itself is not kept. Failed sign-ins are throttled per client
// address and overall (signinThrottle): past the limit every sign-in is
// answered 429 with Retry-After, before the token is looked at.
func (c *Console) login(w http.ResponseWriter, r *http.Request) {
	if c.opts.Verify == nil || !sameOrigin(r) {
		c.refuse(w, r, http.StatusForbidden, "sign-in not possible here")
		return
	}
	if d := c.throttle.wait(r.RemoteAddr); d > 0 {
		secs := retryAfter(d)
		w.Header().Set("Retry-After", strconv.Itoa(secs))
		c.refuse(w, r, http.StatusTooManyRequests, fmt.Sprintf("too many failed sign-ins: try again in %d s", secs))
		return
	}
	ck, err := r.Cookie(loginCookie)
	if err != nil || subtle.ConstantTimeCompare([]byte(r.PostFormValue("csrf")), []byte(ck.Value)) != 1 {
		c.refuse(w, r, http.StatusForbidden, "missing or wrong CSRF token")
		return
	}
	p, err := c.opts.Verify(r.Context(), strings.TrimSpace(r.PostFormValue("token")), r)
	if err != nil || p == nil {
		c.throttle.fail(r.RemoteAddr)
		c.logger.Warn("console: sign-in failed", slog.String("remote", r.RemoteAddr))
		http.Redirect(w, r, "/console/login?error="+errInvalidToken, http.StatusSeeOther)
		return
	}
	if !p.Matches(c.opts.Admins) {
		c.refuse(w, r, http.StatusForbidden, "not a console admin")
		return
	}
	id, _ := c.sessions.create(p.Name)
	c.setSessionCookie(w, r, id)
	http.SetCookie(w, &http.Cookie{Name: loginCookie, Path: "/console/login", MaxAge: -1})
	c.logger.Info("console: signed in", slog.String("principal", p.Name), slog.String("remote", r.RemoteAddr))
	http.Redirect(w, r, "/console/overview", http.StatusSeeOther)
}

func (c *Console) logout(w http.ResponseWriter, r *http.Request, v *visitor) {
	if v.sessionID != "" {
		c.sessions.end(v.sessionID)
	}
	http.SetCookie(w, &http.Cookie{Name: sessionCookie, Path: "/console", MaxAge: -1})
	http.Redirect(w, r, "/console/login", http.StatusSeeOther)
}
