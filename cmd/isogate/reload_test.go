package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/isogate/isogate/internal/testutil"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// servedGateway is `isogate serve --http` as a child process.
type servedGateway struct {
	cmd *exec.Cmd
	url string

	mu     sync.Mutex
	stderr []string
}

func (s *servedGateway) logged(sub string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.ContainsFunc(s.stderr, func(l string) bool { return strings.Contains(l, sub) })
}

// log returns stderr so far.
func (s *servedGateway) log() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return strings.Join(s.stderr, "\n")
}

func serveWithConfig(t *testing.T, cfgPath string) *servedGateway {
	t.Helper()
	addr := freeAddr(t)
	s := &servedGateway{cmd: exec.Command(binary, "serve", "--config", cfgPath, "--http", addr), url: "http://" + addr + "/mcp"}
	stderr, _ := s.cmd.StderrPipe()
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			s.mu.Lock()
			s.stderr = append(s.stderr, sc.Text())
			s.mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		s.cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { s.cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(15 * time.Second):
			s.cmd.Process.Kill()
		}
	})
	eventually(t, "isogate serve --http to answer", func() bool {
		resp, err := http.Get("http://" + addr + "/healthz")
		if err == nil {
			resp.Body.Close()
		}
		return err == nil
	})
	return s
}

// eventually waits up to 30 s for an outcome nothing signals (see
// testutil.Eventually).
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	testutil.Eventually(t, 30*time.Second, cond, "%s", what)
}

// backendsConfig writes a config whose backends are server-everything
// instances under the given names.
func backendsConfig(t *testing.T, path string, names ...string) {
	t.Helper()
	var b strings.Builder
	fmt.Fprintf(&b, "server:\n  cache_dir: %s\n  log_level: info\nsandbox:\n  isolation: thread\n  trusted_code: true\n  timeout: 10s\nbackends:\n",
		filepath.Join(filepath.Dir(path), "cache"))
	for _, n := range names {
		fmt.Fprintf(&b, "  %s:\n    command: node\n    args: [%q, stdio]\n", n, everythingServer(t))
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
}

// backendNames reads isogate://backends through the client.
func backendNames(t *testing.T, cs *mcp.ClientSession) []string {
	t.Helper()
	res, err := cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: "isogate://backends"})
	if err != nil {
		t.Fatalf("reading isogate://backends: %v", err)
	}
	var rows []struct{ Name string }
	if err := json.Unmarshal([]byte(res.Contents[0].Text), &rows); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, r := range rows {
		names = append(names, r.Name)
	}
	return names
}

func TestSIGHUPReloadsBackendsWhileAClientStaysConnected(t *testing.T) {
	path := filepath.Join(t.TempDir(), "isogate.yaml")
	backendsConfig(t, path, "stay", "leave")
	s := serveWithConfig(t, path)
	cs, err := connectHTTP(t, s.url, "")
	if err != nil {
		t.Fatal(err)
	}
	add := func() (string, bool) {
		return callText(t, cs, "call_tool_chain", map[string]any{"code": "return await stay.get_sum({a: 2, b: 3})"})
	}
	eventually(t, "the first backends", func() bool { text, isErr := add(); return !isErr && strings.Contains(text, "5") })

	backendsConfig(t, path, "stay", "arrive")
	if err := s.cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the reload", func() bool { return slices.Equal(backendNames(t, cs), []string{"arrive", "stay"}) })
	eventually(t, "the added backend to serve", func() bool {
		text, isErr := callText(t, cs, "call_tool_chain", map[string]any{"code": "return await arrive.get_sum({a: 1, b: 1})"})
		return !isErr && strings.Contains(text, "2")
	})
	if text, isErr := add(); isErr || !strings.Contains(text, "5") {
		t.Fatalf("the untouched backend after the reload: %s", text)
	}
	if text, _ := callText(t, cs, "search_tools", map[string]any{"query": "get sum", "limit": 20}); strings.Contains(text, "leave.") {
		t.Fatalf("the removed backend's tools are still in the catalogue:\n%s", text)
	}
	if !s.logged("configuration reloaded") || !s.logged("added=[arrive]") || !s.logged("removed=[leave]") {
		t.Fatalf("no INFO line describing the reload:\n%s", s.log())
	}

	// An invalid configuration is logged and ignored.
	if err := os.WriteFile(path, []byte("backends:\n  bad:\n    transport: carrier-pigeon\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := s.cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the failed reload to be logged", func() bool { return s.logged("keeping the current configuration") })
	if names := backendNames(t, cs); !slices.Equal(names, []string{"arrive", "stay"}) {
		t.Fatalf("backends after an invalid reload: %v", names)
	}
	if text, isErr := add(); isErr || !strings.Contains(text, "5") {
		t.Fatalf("after an invalid reload: %s", text)
	}
}

func TestWatchConfigReloadsAndMetricsAddrServes(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "isogate.yaml")
	metricsAddr := freeAddr(t)
	write := func(backends string) {
		cfg := fmt.Sprintf("server:\n  cache_dir: %s\n  watch_config: true\n  metrics_addr: %s\nsandbox:\n  isolation: thread\n  trusted_code: true\nbackends:\n%s",
			filepath.Join(dir, "cache"), metricsAddr, backends)
		// Written aside and renamed into place, as editors save: the
		// watcher sees one complete file.
		tmp := path + ".tmp"
		if err := os.WriteFile(tmp, []byte(cfg), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, path); err != nil {
			t.Fatal(err)
		}
	}
	everything := func(name string) string {
		return fmt.Sprintf("  %s:\n    command: node\n    args: [%q, stdio]\n", name, everythingServer(t))
	}
	write(everything("first"))
	s := serveWithConfig(t, path)
	scrape := func() string {
		resp, err := http.Get("http://" + metricsAddr + "/metrics")
		if err != nil {
			return ""
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return string(b)
	}
	eventually(t, "server.metrics_addr to serve the first backend", func() bool {
		return strings.Contains(scrape(), `isogate_backend_up{backend="first"} 1`)
	})
	write(everything("first") + everything("second"))
	eventually(t, "the file change to add a backend", func() bool {
		return strings.Contains(scrape(), `isogate_backend_up{backend="second"} 1`)
	})
	if !s.logged(`trigger="file change"`) || !s.logged("added=[second]") {
		t.Fatalf("no INFO line for the file change:\n%s", s.log())
	}
}

// The attack of issue 25 (7): rotating server.auth_token with SIGHUP did
// nothing and logged changed=[]; the old token kept working. Now the new
// token is in force at once, the old one gets 401, and a changed key a
// reload cannot apply is named in a warning.
func TestSIGHUPRotatesTheAuthToken(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "isogate.yaml")
	write := func(token, timeout string) {
		cfg := fmt.Sprintf("server:\n  cache_dir: %s\n  auth_token: %s\nsandbox:\n  isolation: thread\n  trusted_code: true\n  timeout: %s\n",
			filepath.Join(dir, "cache"), token, timeout)
		if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("old-token-1", "10s")
	s := serveWithConfig(t, path)
	status := func(token string) int {
		req, _ := http.NewRequest(http.MethodPost, s.url, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if status("old-token-1") == http.StatusUnauthorized || status("new-token-2") != http.StatusUnauthorized {
		t.Fatal("the first token is not the one in force")
	}
	write("new-token-2", "20s")
	if err := s.cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the reload", func() bool { return s.logged("configuration reloaded") })
	if got := status("old-token-1"); got != http.StatusUnauthorized {
		t.Errorf("the old token after the rotation: %d, want 401", got)
	}
	if got := status("new-token-2"); got == http.StatusUnauthorized {
		t.Errorf("the new token after the rotation: %d", got)
	}
	if _, err := connectHTTP(t, s.url, "new-token-2"); err != nil {
		t.Errorf("a client with the new token: %v", err)
	}
	if !s.logged("applied=[server.auth_token]") || !s.logged("take effect only after a restart") || !s.logged("keys=[sandbox.timeout]") {
		t.Errorf("the reload does not say what it applied and what needs a restart:\n%s", s.log())
	}
	if strings.Contains(s.log(), "new-token-2") || strings.Contains(s.log(), "old-token-1") {
		t.Errorf("a token is in the log:\n%s", s.log())
	}

	// Issue 33 (6): putting sandbox.timeout back as it runs warns about
	// nothing (the reload compares with what runs, not with the previous
	// file).
	write("new-token-2", "10s")
	if err := s.cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the second reload", func() bool { return strings.Count(s.log(), "configuration reloaded") == 2 })
	if n := strings.Count(s.log(), "take effect only after a restart"); n != 1 {
		t.Errorf("%d restart warnings, want the first reload's only:\n%s", n, s.log())
	}
}

// TestSIGHUPAppliesPrincipalRules: a reload applies server.auth.rules to
// a running gateway, for the sessions already open: alice's rule that now
// denies everything.echo refuses her next call with TOOL_DENIED naming the
// rule, bob's calls go on, and a reload without the rule lets alice call
// again; the log says the rules were applied, not that they wait for a
// restart. Red with server.auth.rules among the keys that need a restart
// (alice's echo still ran after the reload).
func TestSIGHUPAppliesPrincipalRules(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "isogate.yaml")
	const aliceToken, bobToken = "alice-token-0123456789", "bob-token-0123456789ab"
	write := func(rules string) {
		cfg := fmt.Sprintf(`server:
  cache_dir: %s
  auth:
    mode: token
    tokens:
      alice: { token: %s }
      bob: { token: %s }
%sbackends:
  everything:
    command: node
    args: [%q, stdio]
sandbox:
  isolation: thread
  trusted_code: true
`, filepath.Join(dir, "cache"), aliceToken, bobToken, rules, everythingServer(t))
		if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("")
	s := serveWithConfig(t, path)
	reload := func(n int) {
		t.Helper()
		if err := s.cmd.Process.Signal(syscall.SIGHUP); err != nil {
			t.Fatal(err)
		}
		eventually(t, "the reload", func() bool { return strings.Count(s.log(), "configuration reloaded") == n })
	}
	sessions := map[string]*mcp.ClientSession{}
	for name, token := range map[string]string{"alice": aliceToken, "bob": bobToken} {
		cs, err := connectHTTP(t, s.url, token)
		if err != nil {
			t.Fatalf("%s connects: %v", name, err)
		}
		sessions[name] = cs
	}
	echo := func(who string) (string, bool) {
		t.Helper()
		return callText(t, sessions[who], "call_tool_chain", map[string]any{"code": `return await everything.echo({message: "hi"})`, "timeout": 30000})
	}
	for _, who := range []string{"alice", "bob"} {
		if text, isErr := echo(who); isErr || !strings.Contains(text, "hi") {
			t.Fatalf("%s's echo before any rule: %s", who, text)
		}
	}

	write("    rules:\n      alice-no-echo:\n        principals: [alice]\n        deny: [\"everything.echo\"]\n")
	reload(1)
	if text, isErr := echo("alice"); !isErr || !strings.Contains(text, "TOOL_DENIED") || !strings.Contains(text, "server.auth.rules.alice-no-echo") {
		t.Errorf("alice's echo after the reload that denies it: %s", text)
	}
	if text, isErr := echo("bob"); isErr || !strings.Contains(text, "hi") {
		t.Errorf("bob's echo after the reload: %s", text)
	}
	if !s.logged("applied=[server.auth.rules]") || s.logged("take effect only after a restart") {
		t.Errorf("the reload does not say it applied server.auth.rules:\n%s", s.log())
	}

	write("")
	reload(2)
	if text, isErr := echo("alice"); isErr || !strings.Contains(text, "hi") {
		t.Errorf("alice's echo once the rule is gone: %s", text)
	}
}
