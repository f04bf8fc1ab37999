package runcode

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/isogate/isogate/config"
)

// fetchServer is a loopback HTTP server for api.fetch tests.
type fetchServer struct {
	*httptest.Server
	hits atomic.Int32
}

func newFetchServer(t *testing.T) *fetchServer {
	s := &fetchServer{}
	mux := http.NewServeMux()
	mux.HandleFunc("/echo", func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("X-Reply", "yes")
		json.NewEncoder(w).Encode(map[string]string{
			"method": r.Method, "query": r.URL.RawQuery, "body": string(body),
			"content_type": r.Header.Get("Content-Type"), "x_test": r.Header.Get("X-Test"),
			"user_agent": r.Header.Get("User-Agent"),
		})
	})
	mux.HandleFunc("/bytes", func(w http.ResponseWriter, r *http.Request) {
		n, _ := strconv.Atoi(r.URL.Query().Get("n"))
		w.Write([]byte(strings.Repeat("b", n)))
	})
	mux.HandleFunc("/redirect", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, r.URL.Query().Get("to"), http.StatusFound)
	})
	mux.HandleFunc("/loop", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/loop", http.StatusFound)
	})
	mux.HandleFunc("/status", func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusTeapot)
		w.Write([]byte("short and stout"))
	})
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.hits.Add(1)
		mux.ServeHTTP(w, r)
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *fetchServer) port() string {
	u, _ := url.Parse(s.URL)
	return u.Port()
}

func fetchRunner(t *testing.T, allow []string, allowPrivate bool) *Service {
	t.Helper()
	return newRunner(t, config.RunCodeConfig{Fetch: config.FetchConfig{AllowHosts: allow, AllowPrivate: allowPrivate}})
}

func TestFetch_AllowedHost(t *testing.T) {
	srv := newFetchServer(t)
	r := fetchRunner(t, []string{"127.0.0.1"}, true)
	out := r.Run(context.Background(), Input{Code: fmt.Sprintf(`
		const res = await api.fetch(%q, {method: "post", headers: {"X-Test": "hi"}, body: {a: 1}});
		const text = await api.fetch(%q, {method: "PUT", body: "plain"});
		const teapot = await api.fetch(%q);
		return {status: res.status, ok: res.ok, reply: res.headers["x-reply"], echo: JSON.parse(res.body),
			text: JSON.parse(text.body).body, textType: JSON.parse(text.body).content_type,
			teapot: [teapot.status, teapot.ok, teapot.body]}`,
		srv.URL+"/echo?q=1", srv.URL+"/echo", srv.URL+"/status")})
	if !out.OK {
		t.Fatalf("error: %+v", out.Error)
	}
	var got struct {
		Status   int
		OK       bool
		Reply    string
		Echo     map[string]string
		Text     string
		TextType string
		Teapot   []any
	}
	if err := json.Unmarshal(out.Result, &got); err != nil {
		t.Fatal(err)
	}
	if got.Status != 200 || !got.OK || got.Reply != "yes" {
		t.Errorf("response = %+v", got)
	}
	want := map[string]string{"method": "POST", "query": "q=1", "body": `{"a":1}`, "content_type": "application/json",
		"x_test": "hi", "user_agent": "isogate-run-code"}
	for k, v := range want {
		if got.Echo[k] != v {
			t.Errorf("server saw %s = %q, want %q", k, got.Echo[k], v)
		}
	}
	if got.Text != "plain" || got.TextType != "" {
		t.Errorf("string body arrived as %q (%q)", got.Text, got.TextType)
	}
	if fmt.Sprint(got.Teapot) != "[418 false short and stout]" {
		t.Errorf("teapot = %v", got.Teapot)
	}
}

func TestFetch_OtherHostRefused(t *testing.T) {
	srv := newFetchServer(t)
	r := fetchRunner(t, []string{"example.com", "*.example.org"}, true)
	for _, u := range []string{srv.URL + "/echo", "http://example.org/", "http://evil-example.com/", "http://example.com.evil.net/"} {
		out := r.Run(context.Background(), Input{Code: fmt.Sprintf(`return await api.fetch(%q)`, u)})
		wantError(t, out, VMError, "is not allowed (allowed hosts: *.example.org, example.com)")
	}
	if n := srv.hits.Load(); n != 0 {
		t.Fatalf("server got %d requests", n)
	}
	// Only http and https.
	out := r.Run(context.Background(), Input{Code: `return await api.fetch("file:///etc/passwd")`})
	wantError(t, out, VMError, "only http and https URLs")
}

func TestFetch_PortPattern(t *testing.T) {
	srv := newFetchServer(t)
	r := fetchRunner(t, []string{"127.0.0.1:" + srv.port()}, true)
	if got := mustOK(t, r, Input{Code: fmt.Sprintf(`return (await api.fetch(%q)).status`, srv.URL+"/echo")}); got != "200" {
		t.Fatalf("status = %s", got)
	}
	r = fetchRunner(t, []string{"127.0.0.1:1"}, true)
	wantError(t, r.Run(context.Background(), Input{Code: fmt.Sprintf(`return await api.fetch(%q)`, srv.URL)}), VMError, "is not allowed")
}

func TestFetch_PrivateAddressRefusedAtDial(t *testing.T) {
	srv := newFetchServer(t)
	localhost := strings.Replace(srv.URL, "127.0.0.1", "localhost", 1) + "/echo"
	for _, allow := range []string{"localhost", "127.0.0.1"} {
		r := fetchRunner(t, []string{allow}, false)
		u := srv.URL + "/echo"
		if allow == "localhost" {
			u = localhost // allowlisted by name, but it resolves to loopback
		}
		out := r.Run(context.Background(), Input{Code: fmt.Sprintf(`return await api.fetch(%q)`, u)})
		wantError(t, out, VMError, "refused: private, loopback and link-local addresses are not allowed")
	}
	if n := srv.hits.Load(); n != 0 {
		t.Fatalf("server got %d requests", n)
	}
	// Allowed explicitly.
	r := fetchRunner(t, []string{"localhost"}, true)
	if got := mustOK(t, r, Input{Code: fmt.Sprintf(`return (await api.fetch(%q)).status`, localhost)}); got != "200" {
		t.Fatalf("status = %s", got)
	}
}

func TestFetch_RedirectsRechecked(t *testing.T) {
	srv := newFetchServer(t)
	r := fetchRunner(t, []string{"127.0.0.1"}, true)
	redirect := func(to string) string {
		return srv.URL + "/redirect?to=" + url.QueryEscape(to)
	}
	// To an allowed host: followed.
	got := mustOK(t, r, Input{Code: fmt.Sprintf(`const r = await api.fetch(%q); return [r.status, r.url]`, redirect(srv.URL+"/echo"))})
	if got != fmt.Sprintf(`[200,%q]`, srv.URL+"/echo") {
		t.Fatalf("result = %s", got)
	}
	// To a host off the allowlist (the same server by another name): refused.
	hits := srv.hits.Load()
	out := r.Run(context.Background(), Input{Code: fmt.Sprintf(`return await api.fetch(%q)`,
		redirect(strings.Replace(srv.URL, "127.0.0.1", "localhost", 1)+"/echo"))})
	wantError(t, out, VMError, "redirect refused: host \"localhost:"+srv.port()+"\" is not allowed")
	if n := srv.hits.Load() - hits; n != 1 {
		t.Fatalf("server got %d requests, want only the redirecting one", n)
	}
	// Redirect loops end.
	out = r.Run(context.Background(), Input{Code: fmt.Sprintf(`return await api.fetch(%q)`, srv.URL+"/loop")})
	wantError(t, out, VMError, "stopped after 5 redirects")
}

func TestFetch_ResponseCap(t *testing.T) {
	srv := newFetchServer(t)
	r := fetchRunner(t, []string{"127.0.0.1"}, true)
	got := mustOK(t, r, Input{Code: fmt.Sprintf(`return (await api.fetch(%q)).body.length`, srv.URL+"/bytes?n=1048576")})
	if got != "1048576" {
		t.Fatalf("1 MiB body length = %s", got)
	}
	out := r.Run(context.Background(), Input{Code: fmt.Sprintf(`return (await api.fetch(%q)).body.length`, srv.URL+"/bytes?n=1048577")})
	wantError(t, out, VMError, "exceeds the limit of 1048576 bytes")
}

func TestFetch_Arguments(t *testing.T) {
	r := fetchRunner(t, []string{"127.0.0.1"}, true)
	cases := []struct{ code, want string }{
		{`return await api.fetch(42)`, "argument 1: type"},
		{`return await api.fetch()`, "need at least 1"},
		{`return await api.fetch("http://127.0.0.1/", {mode: "cors"})`, "argument 2"},
		{`return await api.fetch("http://127.0.0.1/", {headers: {a: 1}})`, "argument 2"},
		{`return await api.fetch("http://127.0.0.1/", {method: "TRACE"})`, `method "TRACE" is not supported`},
	}
	for _, c := range cases {
		wantError(t, r.Run(context.Background(), Input{Code: c.code}), VMError, c.want)
	}
}

func TestFetch_Metadata(t *testing.T) {
	r := fetchRunner(t, []string{"api.example.com", "*.example.org"}, false)
	d := r.Description()
	for _, want := range []string{
		"- api.fetch(url, {method, headers, body}) -> {status, ok, url, headers, body}: HTTP(S) request.",
		"Only these hosts are allowed: api.example.com, *.example.org.",
	} {
		if !strings.Contains(d, want) {
			t.Errorf("description lacks %q:\n%s", want, d)
		}
	}
	out := r.Run(context.Background(), Input{Code: "return 1"})
	if len(out.Environment.APIs) != 1 || out.Environment.APIs[0].Name != "api.fetch" {
		t.Fatalf("apis = %+v", out.Environment.APIs)
	}
	if r.Tool().Annotations.ReadOnlyHint {
		t.Fatal("a tool that can POST is advertised as read-only")
	}
	// Nothing configured: no api object at all.
	if got := mustOK(t, newRunner(t, config.RunCodeConfig{}), Input{Code: "return typeof api"}); got != `"undefined"` {
		t.Fatalf("typeof api = %s", got)
	}
}

func TestPublicAddr(t *testing.T) {
	cases := map[string]bool{
		"8.8.8.8": true, "1.1.1.1": true, "2606:4700:4700::1111": true, "64:ff9b::808:808": true,
		"127.0.0.1": false, "127.8.9.10": false, "::1": false, "10.1.2.3": false, "172.16.0.1": false,
		"192.168.1.1": false, "169.254.169.254": false, "fe80::1": false, "fc00::1": false, "fd12::1": false,
		"0.0.0.0": false, "::": false, "100.64.0.1": false, "224.0.0.1": false, "255.255.255.255": false,
		"::ffff:127.0.0.1": false, "::ffff:10.0.0.1": false, "64:ff9b::a00:1": false, "2002:a00:1::": false,
		"2002:808:808::": true, "ff02::1": false, "198.18.0.1": false,
	}
	for s, want := range cases {
		if got := publicAddr(netip.MustParseAddr(s)); got != want {
			t.Errorf("publicAddr(%s) = %v, want %v", s, got, want)
		}
	}
}

func TestHostPattern(t *testing.T) {
	cases := []struct {
		pattern, host, port string
		want                bool
	}{
		{"api.example.com", "api.example.com", "443", true},
		{"api.example.com", "api.example.com", "8080", true},
		{"API.Example.com", "api.example.com", "443", true},
		{"api.example.com", "example.com", "443", false},
		{"api.example.com", "x.api.example.com", "443", false},
		{"*.example.com", "a.example.com", "443", true},
		{"*.example.com", "a.b.example.com", "80", true},
		{"*.example.com", "example.com", "443", false},
		{"*.example.com", "badexample.com", "443", false},
		{"x.com:8443", "x.com", "8443", true},
		{"x.com:8443", "x.com", "443", false},
		{"10.0.0.1", "10.0.0.1", "80", true},
		{"::1", "::1", "80", true},
		{"[::1]:80", "::1", "80", true},
		{"[::1]:80", "::1", "81", false},
		{"::1", "0:0:0:0:0:0:0:1", "80", true},
	}
	for _, c := range cases {
		p, err := parseHostPattern(c.pattern)
		if err != nil {
			t.Fatalf("%s: %v", c.pattern, err)
		}
		if got := p.match(c.host, c.port); got != c.want {
			t.Errorf("%q matches %s:%s = %v, want %v", c.pattern, c.host, c.port, got, c.want)
		}
	}
	for _, bad := range []string{"", "*.", "a/b", "*.*.x.com"} {
		if _, err := parseHostPattern(bad); err == nil {
			t.Errorf("parseHostPattern(%q) succeeded", bad)
		}
	}
}
