package gateway

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/isogate/isogate/config"
	"github.com/isogate/isogate/internal/app"
	"github.com/isogate/isogate/internal/backend"
	"github.com/isogate/isogate/internal/testutil"
)

// The attack of issue 25 (5): an HTTP backend that cannot be reached put
// its URL, query-string API key included, in last_error, which the
// unauthenticated /readyz and isogate://backends print. Secrets in the URL
// (userinfo, query values) and header values never leave: not in /readyz,
// the resource, a program's error or the log.
func TestBackendSecretsNeverLeaveThroughErrors(t *testing.T) {
	// A port nothing listens on: every connection attempt is refused.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	const key, password, token = "QUERYSECRET42", "USERSECRET42", "HEADERSECRET42"
	down := backend.Spec{Backend: config.Backend{Name: "down", Transport: config.TransportStreamableHTTP,
		URL:     "http://admin:" + password + "@" + addr + "/mcp?api_key=" + key + "&region=eu",
		Headers: map[string]string{"Authorization": "Bearer " + token}}}
	cfg := config.Default()
	cfg.Server.CacheDir = t.TempDir()
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	var logs testutil.Buffer
	g, err := build(cfg, app.Options{Runner: testPool(), Logger: slog.New(slog.NewTextHandler(&logs, nil)), ExtraSpecs: []backend.Spec{down}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.Close() })
	if err := g.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	testutil.Eventually(t, 30*time.Second, func() bool {
		for _, st := range g.app.Backends.Status() {
			if st.Name == "down" && st.LastError != "" {
				return true
			}
		}
		return false
	}, "the backend to fail")
	srv := httptest.NewServer(g.HTTPHandler())
	defer srv.Close()
	resp, err := http.Get(srv.URL + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	readyz, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	cs := connect(t, g, nil)
	res, err := cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: "isogate://backends"})
	if err != nil {
		t.Fatal(err)
	}
	one, err := cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: "isogate://backend/down"})
	if err != nil {
		t.Fatal(err)
	}
	_, callErr := g.app.Backends.Call(context.Background(), "down", &mcp.CallToolParams{Name: "x"})
	texts := map[string]string{"/readyz": string(readyz), "isogate://backends": res.Contents[0].Text,
		"isogate://backend/down": one.Contents[0].Text, "call error": errText(callErr), "log": logs.String()}
	if !strings.Contains(string(readyz), addr) || !strings.Contains(string(readyz), "api_key=xxxxx") {
		t.Fatalf("/readyz does not say what failed (the address, the parameter): %s", readyz)
	}
	for where, text := range texts {
		for _, secret := range []string{key, password, token} {
			if strings.Contains(text, secret) {
				t.Errorf("%s shows %s:\n%s", where, secret, text)
			}
		}
	}
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// Redaction of URLs in free text keeps what says what failed.
func TestRedactURL(t *testing.T) {
	for in, want := range map[string]string{
		"https://u:p@h/x?key=v&flag": "https://u:xxxxx@h/x?key=xxxxx&flag",
		"https://h/x":                "https://h/x",
		"redis://:pw@redis:6379/0":   "redis://:xxxxx@redis:6379/0",
	} {
		if got := backend.RedactURL(in); got != want {
			t.Errorf("RedactURL(%q) = %q, want %q", in, got, want)
		}
	}
	b := config.Backend{URL: "https://h/mcp?token=a%2Fb", Headers: map[string]string{"X-Api-Key": "k3y-value", "Authorization": "Bearer tok123"}}
	msg := backend.Redact(`401 from server: got key "k3y-value", auth tok123, token a/b and a%2Fb`, b)
	if strings.Contains(msg, "k3y-value") || strings.Contains(msg, "tok123") || strings.Contains(msg, "a/b") || strings.Contains(msg, "a%2Fb") {
		t.Errorf("Redact left a secret: %s", msg)
	}
}

// Issue 25 (8): /metrics needed no token. With server.metrics_auth it
// does, and /readyz tells a caller without the token only whether the
// gateway is ready.
func TestMetricsAuth(t *testing.T) {
	for _, on := range []bool{false, true} {
		cfg := config.Default()
		cfg.Server.CacheDir = t.TempDir()
		cfg.Server.AuthToken = "metrics-token-1"
		cfg.Server.MetricsAuth = on
		if err := cfg.Validate(); err != nil {
			t.Fatal(err)
		}
		local := mcp.NewServer(&mcp.Implementation{Name: "local"}, nil)
		mcp.AddTool(local, &mcp.Tool{Name: "echo"}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{}, nil, nil
		})
		g, err := build(cfg, app.Options{Runner: testPool(), Logger: slog.New(slog.DiscardHandler), ExtraSpecs: []backend.Spec{backend.InMemory("local", local)}})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { g.Close() })
		if err := g.Start(context.Background()); err != nil {
			t.Fatal(err)
		}
		srv := httptest.NewServer(g.HTTPHandler())
		defer srv.Close()
		get := func(path, token string) (int, string) {
			req, _ := http.NewRequest(http.MethodGet, srv.URL+path, nil)
			if token != "" {
				req.Header.Set("Authorization", "Bearer "+token)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			return resp.StatusCode, string(b)
		}
		code, _ := get("/metrics", "")
		if want := map[bool]int{false: 200, true: 401}[on]; code != want {
			t.Errorf("metrics_auth %v: /metrics without the token: %d, want %d", on, code, want)
		}
		if code, _ := get("/metrics", "metrics-token-1"); code != 200 {
			t.Errorf("metrics_auth %v: /metrics with the token: %d", on, code)
		}
		_, body := get("/readyz", "")
		if detailed := strings.Contains(body, "not_ready"); detailed == on {
			t.Errorf("metrics_auth %v: /readyz without the token: %s", on, body)
		}
		if _, body := get("/readyz", "metrics-token-1"); !strings.Contains(body, "not_ready") {
			t.Errorf("metrics_auth %v: /readyz with the token: %s", on, body)
		}
		if code, _ := get("/healthz", ""); code != 200 {
			t.Errorf("/healthz: %d", code)
		}
	}
}
