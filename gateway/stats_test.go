package gateway

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/isogate/isogate/config"
)

// readStats reads isogate://stats on cs.
func readStats(t *testing.T, cs *mcp.ClientSession) (calls int64, tools map[string]int64) {
	t.Helper()
	res, err := cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: "isogate://stats"})
	if err != nil {
		t.Fatal(err)
	}
	var s struct {
		ToolCalls int64 `json:"tool_calls"`
		Tools     []struct {
			Name  string `json:"name"`
			Calls int64  `json:"calls"`
		} `json:"tools"`
	}
	if err := json.Unmarshal([]byte(res.Contents[0].Text), &s); err != nil {
		t.Fatal(err)
	}
	tools = map[string]int64{}
	for _, tl := range s.Tools {
		tools[tl.Name] = tl.Calls
	}
	return s.ToolCalls, tools
}

// TestStatsPerCaller: isogate://stats shows each caller its principal's
// calls (passthrough and programs, from any of its sessions), never
// another principal's; a principal named in server.auth.admins sees the
// gateway's.
func TestStatsPerCaller(t *testing.T) {
	h := newHTTPGateway(t, func(c *config.Config) {
		c.Server.Expose = config.ExposeBoth
		c.Server.Auth.Mode = config.AuthToken
		c.Server.Auth.Tokens = map[string]config.StaticToken{"alice": {Token: "alice-token"}, "bob": {Token: "bob-token"}, "carol": {Token: "carol-token"}}
		c.Server.Auth.Admins = []string{"alice"}
	})
	bob := h.connect(t, &http.Client{Transport: bearer{"bob-token"}})
	bob2 := h.connect(t, &http.Client{Transport: bearer{"bob-token"}})
	alice := h.connect(t, &http.Client{Transport: bearer{"alice-token"}})
	carol := h.connect(t, &http.Client{Transport: bearer{"carol-token"}})

	if _, isErr, _ := callText(t, bob, "echo", map[string]any{"x": 1}); isErr {
		t.Fatal("passthrough echo failed")
	}
	chainOK(t, bob, `await local.echo({y: 2}); return 1`)

	if n, tools := readStats(t, bob); n != 2 || tools["local.echo"] != 2 {
		t.Errorf("bob sees %d calls %v, want his 2", n, tools)
	}
	if n, tools := readStats(t, bob2); n != 2 || tools["local.echo"] != 2 {
		t.Errorf("bob's other session sees %d calls %v, want his principal's 2", n, tools)
	}
	if n, tools := readStats(t, carol); n != 0 {
		t.Errorf("carol sees %d calls %v, want none of bob's", n, tools)
	}
	if n, _ := readStats(t, alice); n != 2 {
		t.Errorf("alice (admin) sees %d calls, want the gateway's 2", n)
	}
}

// TestAuthRejectionsCounted: a refused request counts in
// isogate_auth_rejections_total by its reason, without token material.
func TestAuthRejectionsCounted(t *testing.T) {
	h := newHTTPGateway(t, func(c *config.Config) {
		c.Server.Auth.Mode = config.AuthToken
		c.Server.Auth.Tokens = map[string]config.StaticToken{"alice": {Token: "alice-token"}}
	})
	for _, token := range []string{"guessed-token", ""} {
		req, _ := http.NewRequest(http.MethodPost, h.url, strings.NewReader(`{}`))
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized {
			t.Fatalf("status %d, want 401", resp.StatusCode)
		}
	}
	resp, err := http.Get(strings.TrimSuffix(h.url, "/mcp") + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, want := range []string{`isogate_auth_rejections_total{reason="unknown_token"} 1`, `isogate_auth_rejections_total{reason="missing_token"} 1`} {
		if !strings.Contains(string(body), want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
	if strings.Contains(string(body), "guessed-token") {
		t.Error("/metrics shows token material")
	}
}

// TestSandboxReported: /readyz and isogate://stats say how programs are
// isolated and which V8 runs them.
func TestSandboxReported(t *testing.T) {
	h := newHTTPGateway(t, nil)
	resp, err := http.Get(strings.TrimSuffix(h.url, "/mcp") + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(body), `"sandbox":{"isolation":"thread","v8_version":"10.`) {
		t.Errorf("/readyz lacks the sandbox report: %s", body)
	}
	cs := h.connect(t, nil)
	res, err := cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: "isogate://stats"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(res.Contents[0].Text, `"isolation": "thread"`) {
		t.Errorf("isogate://stats lacks the sandbox report: %s", res.Contents[0].Text)
	}
}
