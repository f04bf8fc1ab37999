package gateway

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/isogate/isogate/config"
	"github.com/isogate/isogate/internal/app"
)

// noRedirects is an HTTP client that reports redirects instead of
// following them, with a failure bound (not a synchronisation) on each
// request.
var noRedirects = &http.Client{Timeout: 30 * time.Second,
	CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

// toolsList is a JSON-RPC tools/list request.
const toolsList = `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}`

// send makes one request to base+path with the Host header host (the
// URL's own when ""), the headers in hdr and, for POST, the body payload;
// it returns the status and the body.
func send(t *testing.T, method, base, path, host string, hdr map[string]string, payload string) (int, string) {
	t.Helper()
	var body io.Reader
	if method == http.MethodPost {
		body = strings.NewReader(payload)
	}
	req, err := http.NewRequestWithContext(t.Context(), method, base+path, body)
	if err != nil {
		t.Fatal(err)
	}
	if host != "" {
		req.Host = host
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := noRedirects.Do(req)
	if err != nil {
		t.Fatalf("%s %s (Host %q): %v", method, path, host, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<16))
	return resp.StatusCode, string(b)
}

// guardCase is a listener of a gateway, the patterns it serves and the
// Host values it must accept besides its own address.
type guardCase struct {
	name     string
	base     string // http://127.0.0.1:port
	patterns []string
	accepted []string // Host values (besides the URL's) that pass the guard
}

// checkEveryRoute requests every pattern of c, and a path no route
// serves, over real HTTP: with a foreign Host (several spellings, GET and
// POST) each is answered 403 by the Host guard; with its own Host and a
// foreign Origin, 403 by the Origin guard; with its own Host (and each of
// c.accepted) and no Origin, by the route itself (neither guard's 403
// nor 404: the route exists and the guard let the request through).
func checkEveryRoute(t *testing.T, c guardCase) {
	t.Helper()
	u, _ := url.Parse(c.base)
	port := u.Port()
	foreign := []string{"evil.example:" + port, "evil.example", "localhost.evil.example:" + port,
		"127.0.0.1.nip.io:" + port, "LOCALHOST.evil.example", "[::1].evil.example"}
	if len(c.patterns) < 3 {
		t.Fatalf("%s: only %d routes listed: %v", c.name, len(c.patterns), c.patterns)
	}
	for _, path := range append(c.patterns, "/not-a-route") {
		for _, method := range []string{http.MethodGet, http.MethodPost} {
			for _, host := range foreign {
				status, body := send(t, method, c.base, path, host, nil, toolsList)
				want := fmt.Sprintf("host %q is not allowed (server.allowed_hosts)", host)
				if status != http.StatusForbidden || !strings.Contains(body, want) {
					t.Errorf("%s: %s %s with Host %q: %d %.200q; want 403 %q", c.name, method, path, host, status, body, want)
				}
			}
			origin := "http://evil.example:" + port
			status, body := send(t, method, c.base, path, "", map[string]string{"Origin": origin}, toolsList)
			if want := fmt.Sprintf("origin %q is not allowed", origin); status != http.StatusForbidden || !strings.Contains(body, want) {
				t.Errorf("%s: %s %s with Origin %q: %d %.200q; want 403 %q", c.name, method, path, origin, status, body, want)
			}
		}
		if path == "/not-a-route" {
			continue
		}
		for _, host := range append([]string{""}, c.accepted...) {
			status, body := send(t, http.MethodGet, c.base, path, host, nil, "")
			if status == http.StatusNotFound || strings.Contains(body, "is not allowed") {
				t.Errorf("%s: GET %s with Host %q: %d %.200q; want it served by the route", c.name, path, host, status, body)
			}
		}
	}
}

// TestEveryRouteRefusesAForeignHost is the DNS rebinding attack on every
// route a gateway's listeners serve, as the surface lists them
// (Routes, MetricsRoutes: a route added there is attacked here too): a
// page whose name was rebound to 127.0.0.1 sends its own name as Host
// (and, on POST, its own Origin). Without authentication on loopback
// (the default, console on), in oauth mode (the OAuth metadata routes,
// the console behind sign-in), on the separate metrics listener, and
// with server.allowed_hosts (a reverse proxy's name passes, on /mcp too:
// the go-sdk's own check, which would refuse it, is off, ours covers
// /mcp), every foreign Host gets 403 naming server.allowed_hosts before
// any handler answers, and a foreign Origin 403.
func TestEveryRouteRefusesAForeignHost(t *testing.T) {
	local := newHTTPGateway(t, func(c *config.Config) { c.Server.Console.Enabled = true })
	base := strings.TrimSuffix(local.url, "/mcp")
	port := base[strings.LastIndex(base, ":")+1:]
	routes := local.g.app.Surface.Routes()
	for _, want := range []string{"/mcp", "/healthz", "/readyz", "/metrics", "/console", "/console/"} {
		if !strings.Contains(" "+strings.Join(routes, " ")+" ", " "+want+" ") {
			t.Fatalf("Routes() = %v: %s is missing", routes, want)
		}
	}
	checkEveryRoute(t, guardCase{name: "loopback, no auth", base: base, patterns: routes,
		accepted: []string{"localhost:" + port, "localhost", "127.0.0.1", "[::1]:" + port, "LocalHost:" + port}})

	// The separate metrics listener (server.metrics_addr).
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = local.g.ServeMetrics(ctx, ln); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	checkEveryRoute(t, guardCase{name: "metrics listener", base: "http://" + ln.Addr().String(),
		patterns: local.g.app.Surface.MetricsRoutes()})

	// oauth mode: the protected-resource metadata routes.
	p := &idp{key: newKey(t), kid: "k1"}
	startEntraLike(t, p)
	cfg := config.Default()
	cfg.Server.CacheDir = t.TempDir()
	cfg.Sandbox.Isolation = config.IsolationThread
	cfg.Server.Auth.Mode = config.AuthOAuth
	cfg.Server.Auth.Issuer = p.issuer
	cfg.Server.Auth.Audience = audience
	cfg.Server.Console.Enabled = true
	cfg.Server.Console.Admins = []string{"alice"}
	og, obase := serveHealthy(t, cfg, app.Options{Runner: testPool()})
	oroutes := og.app.Surface.Routes()
	if !strings.Contains(strings.Join(oroutes, " "), "/.well-known/oauth-protected-resource") {
		t.Fatalf("oauth mode Routes() = %v: no OAuth metadata", oroutes)
	}
	checkEveryRoute(t, guardCase{name: "oauth", base: obase, patterns: oroutes})

	// server.allowed_hosts: a reverse proxy on this machine forwards its
	// public name.
	proxied := newHTTPGateway(t, func(c *config.Config) {
		c.Server.Console.Enabled = true
		c.Server.AllowedHosts = []string{"mcp.example.com", "admin.example.com:8443"}
	})
	pbase := strings.TrimSuffix(proxied.url, "/mcp")
	checkEveryRoute(t, guardCase{name: "allowed_hosts", base: pbase, patterns: proxied.g.app.Surface.Routes(),
		accepted: []string{"mcp.example.com", "MCP.example.com:443", "admin.example.com:8443"}})
	for _, host := range []string{"admin.example.com", "admin.example.com:9000", "example.com", "mcp.example.com.evil.example"} {
		if status, body := send(t, http.MethodGet, pbase, "/healthz", host, nil, ""); status != http.StatusForbidden {
			t.Errorf("allowed_hosts: Host %q: %d %q; want 403", host, status, body)
		}
	}
	// The reverse proxy's name reaches MCP itself (the go-sdk's own check
	// would refuse it).
	if status, body := send(t, http.MethodPost, pbase, "/mcp", "mcp.example.com", nil, initializeBody); status != http.StatusOK ||
		!strings.Contains(body, `"serverInfo"`) {
		t.Fatalf("initialize through the allowed host: %d %.300q", status, body)
	}
}

// hostCall posts one JSON-RPC request (protocol 2025-11-25, no session, no
// token) to url with Host host ("" for the URL's own) and returns the HTTP
// status and the body.
func hostCall(t *testing.T, url, host, method string, params any) (int, string) {
	t.Helper()
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
	return send(t, http.MethodPost, strings.TrimSuffix(url, "/mcp"), "/mcp", host,
		map[string]string{"Mcp-Protocol-Version": "2025-11-25"}, string(b))
}

// TestForeignHostCannotReadALocalTaskResult is the attack of issue 42 on
// stateless HTTP without authentication (every caller the same
// principal): a local client runs a program as a task; a page rebound to
// 127.0.0.1 lists the tasks and reads the result with tasks/list and
// tasks/result, which the gateway's task boundary answers before the
// go-sdk (and its own localhost check) sees the request. Both are refused
// with 403, and the local client still reads its result.
func TestForeignHostCannotReadALocalTaskResult(t *testing.T) {
	h := newHTTPGateway(t, func(c *config.Config) { c.Server.Stateless = true })
	status, body := hostCall(t, h.url, "", "tools/call", map[string]any{"name": "call_tool_chain",
		"arguments": map[string]any{"code": `return "local-secret-" + 6*7`}, "task": map[string]any{"ttl": 60000}})
	var created struct {
		Result struct {
			Task struct {
				TaskID string `json:"taskId"`
			} `json:"task"`
		} `json:"result"`
	}
	for _, line := range strings.Split(body, "\n") {
		if json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &created) == nil && created.Result.Task.TaskID != "" {
			break
		}
	}
	id := created.Result.Task.TaskID
	if status != http.StatusOK || id == "" {
		t.Fatalf("creating the task: %d %s", status, body)
	}
	// The local client waits for its result (tasks/result blocks until the run ends).
	if status, body := hostCall(t, h.url, "", "tasks/result", map[string]any{"taskId": id}); status != http.StatusOK || !strings.Contains(body, "local-secret-42") {
		t.Fatalf("the local client's tasks/result: %d %s", status, body)
	}
	port := h.url[strings.LastIndex(h.url, ":")+1 : len(h.url)-len("/mcp")]
	for _, host := range []string{"evil.example:" + port, "evil.example"} {
		for _, method := range []string{"tasks/list", "tasks/result", "tasks/get"} {
			status, body := hostCall(t, h.url, host, method, map[string]any{"taskId": id})
			if status != http.StatusForbidden || strings.Contains(body, id) || strings.Contains(body, "local-secret") {
				t.Errorf("%s with Host %q: %d %.300s; want 403, nothing of the task", method, host, status, body)
			}
		}
	}
}
