package console

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/isogate/isogate/internal/authn"
	"github.com/isogate/isogate/internal/desk"
	"github.com/isogate/isogate/internal/surface"
	"github.com/isogate/isogate/internal/typecheck"
)

// Tokens of the fake verifier: "admin-token" is alice (an admin by
// scope), "agent-token" is bob (no admin).
func fakeVerify(_ context.Context, token string, _ *http.Request) (*authn.Principal, error) {
	switch token {
	case "admin-token":
		return &authn.Principal{Name: "alice", Scopes: []string{"isogate.admin"}}, nil
	case "agent-token":
		return &authn.Principal{Name: "bob"}, nil
	}
	return nil, errors.New("invalid token")
}

func testConsole(verify func(context.Context, string, *http.Request) (*authn.Principal, error)) (*Console, *desk.Desk) {
	d := desk.New()
	return New(Sources{Desk: d}, Options{Admins: []string{"scope:isogate.admin"}, Verify: verify, Version: "test"}), d
}

func do(t *testing.T, h http.Handler, method, target string, form url.Values, header http.Header) *http.Response {
	t.Helper()
	var body *strings.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	} else {
		body = strings.NewReader("")
	}
	r := httptest.NewRequest(method, target, body)
	r.RemoteAddr = "192.0.2.7:4000"
	if form != nil {
		r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	for k, v := range header {
		r.Header[k] = v
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w.Result()
}

// signIn signs in with token through the login form and returns the
// session cookie and its CSRF token (read from the overview page).
func signIn(t *testing.T, c *Console, token string) (*http.Cookie, string) {
	t.Helper()
	res := do(t, c, "GET", "/console/login", nil, nil)
	var login *http.Cookie
	for _, ck := range res.Cookies() {
		if ck.Name == loginCookie {
			login = ck
		}
	}
	if login == nil {
		t.Fatal("the login page set no CSRF cookie")
	}
	res = do(t, c, "POST", "/console/login", url.Values{"csrf": {login.Value}, "token": {token}},
		http.Header{"Cookie": {login.String()}})
	if res.StatusCode != http.StatusSeeOther {
		t.Fatalf("sign-in answered %d", res.StatusCode)
	}
	for _, ck := range res.Cookies() {
		if ck.Name == sessionCookie {
			if !ck.HttpOnly || ck.SameSite != http.SameSiteStrictMode {
				t.Errorf("session cookie %+v: want HttpOnly and SameSite=Strict", ck)
			}
			ss := c.sessions.get(ck.Value)
			if ss == nil {
				t.Fatal("no server-side session")
			}
			return ck, ss.csrf
		}
	}
	t.Fatal("sign-in set no session cookie")
	return nil, ""
}

// TestSignInAndAdminsOnly: a browser signs in once; an admin's bearer
// token is served without a session; another principal gets 403, even
// with a valid token, and nobody gets in unauthenticated.
func TestSignInAndAdminsOnly(t *testing.T) {
	c, _ := testConsole(fakeVerify)
	ck, _ := signIn(t, c, "admin-token")
	if res := do(t, c, "GET", "/console/overview", nil, http.Header{"Cookie": {ck.String()}}); res.StatusCode != 200 {
		t.Errorf("signed-in overview: %d", res.StatusCode)
	}
	if res := do(t, c, "GET", "/console/runs", nil, http.Header{"Authorization": {"Bearer admin-token"}}); res.StatusCode != 200 {
		t.Errorf("admin bearer: %d", res.StatusCode)
	}
	if res := do(t, c, "GET", "/console/runs", nil, http.Header{"Authorization": {"Bearer agent-token"}}); res.StatusCode != 403 {
		t.Errorf("non-admin bearer: %d, want 403", res.StatusCode)
	}
	if res := do(t, c, "GET", "/console/runs", nil, nil); res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/console/login" {
		t.Errorf("anonymous: %d %s, want a redirect to the sign-in page", res.StatusCode, res.Header.Get("Location"))
	}
	if res := do(t, c, "GET", "/console/events?page=runs", nil, nil); res.StatusCode != 401 {
		t.Errorf("anonymous events: %d, want 401", res.StatusCode)
	}
	res := do(t, c, "GET", "/console/login", nil, nil)
	csp := res.Header.Get("Content-Security-Policy")
	if !strings.Contains(csp, "script-src 'self'") || strings.Contains(csp, "unsafe-inline") {
		t.Errorf("CSP %q", csp)
	}
}

// TestNonAdminSignInIsRefused: a valid token of a principal outside
// server.console.admins gets no session.
func TestNonAdminSignInIsRefused(t *testing.T) {
	c, _ := testConsole(fakeVerify)
	res := do(t, c, "GET", "/console/login", nil, nil)
	login := res.Cookies()[0]
	res = do(t, c, "POST", "/console/login", url.Values{"csrf": {login.Value}, "token": {"agent-token"}}, http.Header{"Cookie": {login.String()}})
	if res.StatusCode != 403 {
		t.Fatalf("non-admin sign-in: %d, want 403", res.StatusCode)
	}
	for _, ck := range res.Cookies() {
		if ck.Name == sessionCookie {
			t.Error("a non-admin got a session cookie")
		}
	}
}

// TestActionsNeedTheCSRFToken: a POST with the session cookie but
// without (or with another) CSRF token is refused and does nothing; with
// it, the run is cancelled.
func TestActionsNeedTheCSRFToken(t *testing.T) {
	c, d := testConsole(fakeVerify)
	ck, csrf := signIn(t, c, "admin-token")
	cancelled := false
	run, off := d.StartRun("bob", "", "", func(error) { cancelled = true })
	defer off()
	cookie := http.Header{"Cookie": {ck.String()}}
	for _, form := range []url.Values{{"id": {run.ID}}, {"id": {run.ID}, "csrf": {"forged"}}} {
		if res := do(t, c, "POST", "/console/runs/cancel", form, cookie); res.StatusCode != 403 {
			t.Errorf("POST %v: %d, want 403", form, res.StatusCode)
		}
	}
	if cancelled {
		t.Fatal("a POST without the CSRF token cancelled the run")
	}
	cross := http.Header{"Cookie": {ck.String()}, "Origin": {"https://evil.example"}}
	if res := do(t, c, "POST", "/console/runs/cancel", url.Values{"id": {run.ID}, "csrf": {csrf}}, cross); res.StatusCode != 403 || cancelled {
		t.Errorf("cross-origin POST: %d (cancelled %v), want 403", res.StatusCode, cancelled)
	}
	if res := do(t, c, "POST", "/console/runs/cancel", url.Values{"id": {run.ID}, "csrf": {csrf}}, cookie); res.StatusCode != http.StatusSeeOther || !cancelled {
		t.Errorf("POST with the token: %d (cancelled %v)", res.StatusCode, cancelled)
	}
}

// TestNoAuthServesLoopbackOnly: without authentication the console is
// served to loopback clients only.
func TestNoAuthServesLoopbackOnly(t *testing.T) {
	c, _ := testConsole(nil)
	if res := do(t, c, "GET", "/console/overview", nil, nil); res.StatusCode != 403 {
		t.Errorf("remote client without auth: %d, want 403", res.StatusCode)
	}
	r := httptest.NewRequest("GET", "/console/overview", nil)
	r.RemoteAddr = "127.0.0.1:5000"
	w := httptest.NewRecorder()
	c.ServeHTTP(w, r)
	if w.Code != 200 {
		t.Errorf("loopback client without auth: %d", w.Code)
	}
}

// TestArgumentsAreShownInertAndVisible: arguments with markup and a
// right-to-left override render as text, the override as \u202e.
func TestArgumentsAreShownInertAndVisible(t *testing.T) {
	got := prettyArgs([]byte(`{"a":"<img src=x onerror=alert(1)>` + "\u202e" + `gpj.exe"}`))
	if !strings.Contains(got, `\u202e`) || strings.Contains(got, "\u202e") {
		t.Errorf("prettyArgs = %q: the override is not made visible", got)
	}
	c, d := testConsole(fakeVerify)
	_ = d
	var b strings.Builder
	if err := c.pages.renderLive(&b, "approvals", view{CSRF: "x", Data: []desk.ApprovalView{{ID: "approval-1", Tool: "<script>t</script>", Args: []byte(`{"a":"<img src=x onerror=alert(1)>"}`)}}}); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), "<img") || strings.Contains(b.String(), "<script>") {
		t.Errorf("markup not escaped:\n%s", b.String())
	}
}

// The overview shows the type checker (sandbox.typecheck on): its mode,
// state, worker, restarts, checks by outcome and why it is down.
func TestOverviewShowsTheChecker(t *testing.T) {
	d := desk.New()
	rep := &surface.TypecheckReport{Mode: "strict",
		Status: typecheck.Status{State: typecheck.StateRestarting, Where: typecheck.WhereWorker, Restarts: 2,
			Worker: &typecheck.WorkerStatus{PID: 4242}, Error: "the sandbox worker process died (signal: killed)"},
		Checks: typecheck.Checks{OK: 7, Refused: 1, Skipped: 3}}
	c := New(Sources{Desk: d, Sandbox: func() surface.SandboxReport {
		return surface.SandboxReport{Isolation: "process", Typecheck: rep}
	}}, Options{Admins: []string{"scope:isogate.admin"}, Verify: fakeVerify, Version: "test"})
	res := do(t, c, "GET", "/console/overview", nil, http.Header{"Authorization": {"Bearer admin-token"}})
	body, _ := io.ReadAll(res.Body)
	want := `<dd id="typecheck" class="state bad" data-state="restarting">strict · restarting · worker pid 4242 · restarts 2 · ` +
		`checks: 7 ok, 1 refused, 0 failed, 0 timed out, 3 skipped, 0 cancelled · the sandbox worker process died (signal: killed)</dd>`
	if res.StatusCode != 200 || !strings.Contains(string(body), want) {
		t.Errorf("overview %d lacks\n%s\n%s", res.StatusCode, want, body)
	}
}
