package console

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"
)

// testClock is a clock the test moves.
type testClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *testClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *testClock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// clientFrom is an HTTP client whose connections come from ip (a
// loopback address: all of 127.0.0.0/8 is this machine's), following no
// redirects.
func clientFrom(ip string) *http.Client {
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}}
	return &http.Client{Timeout: 30 * time.Second, // a failure bound, not a synchronisation
		Transport:     &http.Transport{DialContext: d.DialContext, DisableKeepAlives: true},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

// attempt is one sign-in's answer.
type attempt struct {
	status     int
	location   string
	retryAfter string
	session    bool
}

// signInOver signs in with token through the real sign-in form at base,
// from ip: it gets the form's CSRF cookie, then posts the token.
func signInOver(t *testing.T, base, ip, token string) attempt {
	t.Helper()
	client := clientFrom(ip)
	res, err := client.Get(base + "/console/login")
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, res.Body)
	res.Body.Close()
	var login *http.Cookie
	for _, ck := range res.Cookies() {
		if ck.Name == loginCookie {
			login = ck
		}
	}
	if login == nil {
		t.Fatal("the sign-in page set no CSRF cookie")
	}
	req, _ := http.NewRequest(http.MethodPost, base+"/console/login",
		strings.NewReader(url.Values{"csrf": {login.Value}, "token": {token}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", base)
	req.AddCookie(login)
	res, err = client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, res.Body)
	res.Body.Close()
	a := attempt{status: res.StatusCode, location: res.Header.Get("Location"), retryAfter: res.Header.Get("Retry-After")}
	for _, ck := range res.Cookies() {
		if ck.Name == sessionCookie && ck.Value != "" {
			a.session = true
		}
	}
	return a
}

var (
	wrongSignIn  = attempt{status: http.StatusSeeOther, location: "/console/login?error=" + errInvalidToken}
	signedIn     = attempt{status: http.StatusSeeOther, location: "/console/overview", session: true}
	throttledFor = func(secs string) attempt { return attempt{status: http.StatusTooManyRequests, retryAfter: secs} }
)

// TestSignInIsThrottled: wrong tokens posted to the real sign-in form
// over HTTP, the throttle's clock moved by the test. One address gets 10
// failures a minute: its 11th sign-in, with the right token, is 429 with
// Retry-After and no session, while another address signs in; once the
// minute is over the right token signs in from the first address too.
// All addresses together get 100 failures a minute: 100 wrong tokens
// from 12 addresses (none past its own limit) make the right token from a
// fresh address 429, until the minute ends.
func TestSignInIsThrottled(t *testing.T) {
	c, _ := testConsole(fakeVerify)
	clock := &testClock{now: time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)}
	c.throttle = newSigninThrottle(clock.Now)
	srv := httptest.NewServer(c)
	defer srv.Close()
	check := func(what string, got, want attempt) {
		t.Helper()
		if got != want {
			t.Fatalf("%s: %+v, want %+v", what, got, want)
		}
	}

	for i := range signinFailuresPerAddr {
		check(fmt.Sprintf("wrong token %d from 127.0.0.2", i+1), signInOver(t, srv.URL, "127.0.0.2", "guess"), wrongSignIn)
	}
	check("the right token from 127.0.0.2 past its limit", signInOver(t, srv.URL, "127.0.0.2", "admin-token"), throttledFor("60"))
	check("the right token from 127.0.0.3", signInOver(t, srv.URL, "127.0.0.3", "admin-token"), signedIn)
	clock.advance(59*time.Second + 500*time.Millisecond)
	check("127.0.0.2 half a second before the minute ends", signInOver(t, srv.URL, "127.0.0.2", "admin-token"), throttledFor("1"))
	clock.advance(500 * time.Millisecond)
	check("the right token from 127.0.0.2 after the minute", signInOver(t, srv.URL, "127.0.0.2", "admin-token"), signedIn)

	// Overall: 100 failures from 12 addresses, each under its own limit.
	for i := range signinFailuresOverall {
		ip := fmt.Sprintf("127.0.1.%d", 1+i/(signinFailuresPerAddr-1))
		check("wrong token from "+ip, signInOver(t, srv.URL, ip, "guess"), wrongSignIn)
	}
	check("the right token from a fresh address past the overall limit", signInOver(t, srv.URL, "127.0.2.1", "admin-token"), throttledFor("60"))
	clock.advance(time.Minute)
	check("the right token from that address after the minute", signInOver(t, srv.URL, "127.0.2.1", "admin-token"), signedIn)
	if n := len(c.throttle.perAddr); n > 12 {
		t.Errorf("the throttle keeps %d addresses, want at most the 12 that failed in the last window", n)
	}
}

// TestSignInPageShowsOnlyFixedMessages: the sign-in page, over real
// HTTP, shows the message of a known code and nothing of any other text
// in its URL; every page declares its icon (no /favicon.ico request).
func TestSignInPageShowsOnlyFixedMessages(t *testing.T) {
	c, _ := testConsole(fakeVerify)
	srv := httptest.NewServer(c)
	defer srv.Close()
	get := func(path string) string {
		t.Helper()
		res, err := clientFrom("127.0.0.1").Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return string(b)
	}
	const icon = `<link rel="icon" href="data:,">`
	if page := get("/console/login?error=" + errInvalidToken); !strings.Contains(page, loginErrors[errInvalidToken]) || !strings.Contains(page, icon) {
		t.Errorf("?error=%s: the page lacks %q or %q:\n%s", errInvalidToken, loginErrors[errInvalidToken], icon, page)
	}
	for _, spoof := range []string{"Your session expired: sign in at https://evil.example", "invalid token", "<b>x</b>", "invalid_token "} {
		page := get("/console/login?error=" + url.QueryEscape(spoof))
		if strings.Contains(page, `id="login-error"`) || strings.Contains(page, "evil.example") || strings.Contains(page, "&lt;b&gt;") {
			t.Errorf("?error=%q is shown:\n%s", spoof, page)
		}
	}
	res, err := clientFrom("127.0.0.1").Post(srv.URL+"/console/login", "application/x-www-form-urlencoded", strings.NewReader("token=x"))
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if b, _ := io.ReadAll(res.Body); res.StatusCode != http.StatusForbidden || !strings.Contains(string(b), icon) {
		t.Errorf("the refused page (%d) lacks %q:\n%s", res.StatusCode, icon, b)
	}
}
