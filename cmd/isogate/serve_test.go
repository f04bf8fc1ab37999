package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/isogate/isogate/internal/resultstore/redistest"
	"github.com/isogate/isogate/internal/testutil"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// everythingServer returns the path of the real server-everything installed
// by `make deps` (npm ci in examples/).
func everythingServer(t *testing.T) string {
	t.Helper()
	p, err := filepath.Abs("../../examples/node_modules/@modelcontextprotocol/server-everything/dist/index.js")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(p); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("server-everything is not installed (run make deps): %v", err)
		}
		t.Skip("server-everything is not installed; run make deps")
	}
	return p
}

// writeConfig writes a gateway config with the real server-everything.
func writeConfig(t *testing.T, extra string) string {
	t.Helper()
	dir := t.TempDir()
	cfg := fmt.Sprintf(`server:
  cache_dir: %s
  log_level: debug
backends:
  everything:
    command: node
    args: [%q, stdio]
    tags: [demo]
sandbox:
  isolation: thread
  trusted_code: true
  timeout: 10s
%s`, filepath.Join(dir, "cache"), everythingServer(t), extra)
	if !strings.Contains(extra, "run_code:") {
		cfg += "run_code:\n  enabled: true\n" // off by default; these tests exercise it
	}
	path := filepath.Join(dir, "isogate.yaml")
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func connectStdio(t *testing.T, args ...string) *mcp.ClientSession {
	t.Helper()
	cmd := exec.Command(binary, args...)
	cmd.Stderr = os.Stderr
	client := mcp.NewClient(&mcp.Implementation{Name: "test-client"}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("connecting to isogate serve: %v", err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

func callText(t *testing.T, cs *mcp.ClientSession, tool string, args map[string]any) (string, bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", tool, err)
	}
	var parts []string
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			parts = append(parts, tc.Text)
		}
	}
	return strings.Join(parts, "\n"), res.IsError
}

// waitForTool polls search_tools until the backend's tools are listed.
func waitForTool(t *testing.T, cs *mcp.ClientSession, query, want string) string {
	t.Helper()
	var text string
	testutil.Eventually(t, 30*time.Second, func() bool {
		text, _ = callText(t, cs, "search_tools", map[string]any{"query": query})
		return strings.Contains(text, want)
	}, "search %q to find %q", query, want)
	return text
}

// exercise runs the discovery workflow and reads every resource.
func exercise(t *testing.T, cs *mcp.ClientSession) {
	t.Helper()
	ctx := context.Background()
	tools, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range tools.Tools {
		names = append(names, tool.Name)
	}
	for _, want := range []string{"search_tools", "tool_info", "list_tools_meta", "call_tool_chain", "run_code"} {
		if !strings.Contains(strings.Join(names, ","), want) {
			t.Fatalf("meta-tool %s missing from %v", want, names)
		}
	}
	meta := map[string]bool{"search_tools": true, "tool_info": true, "list_tools_meta": true, "call_tool_chain": true,
		"run_code": true, "read_result": true, "save_program": true, "programs": true}
	for _, n := range names {
		if !meta[n] {
			t.Fatalf("backend tool %s leaked into the gateway's tool list: %v", n, names)
		}
	}
	search := waitForTool(t, cs, "sum", "everything.get-sum")
	if first := strings.SplitN(search, "\n", 3); len(first) < 2 || !strings.HasPrefix(first[1], "everything.get-sum") {
		t.Fatalf("get-sum is not the first hit:\n%s", search)
	}
	info, isErr := callText(t, cs, "tool_info", map[string]any{"tool_name": "everything.get-sum"})
	if isErr || !strings.Contains(info, "a: number") {
		t.Fatalf("tool_info:\n%s", info)
	}
	list, _ := callText(t, cs, "list_tools_meta", map[string]any{"page_size": 5})
	var page struct {
		Tools      []string `json:"tools"`
		NextCursor string   `json:"next_cursor"`
	}
	if err := json.Unmarshal([]byte(list), &page); err != nil || len(page.Tools) != 5 || page.NextCursor == "" {
		t.Fatalf("list_tools_meta: %s", list)
	}
	sum, isErr := callText(t, cs, "call_tool_chain", map[string]any{"code": `const r = await everything.get_sum({a: 40, b: 2}); return r`})
	if isErr || !strings.Contains(sum, "42") {
		t.Fatalf("call_tool_chain: %s", sum)
	}
	rc, isErr := callText(t, cs, "run_code", map[string]any{"code": "return [1, 2, 3].reduce((a, b) => a + b)"})
	if isErr || !strings.Contains(rc, "6") {
		t.Fatalf("run_code: %s", rc)
	}
	for _, uri := range []string{"isogate://backends", "isogate://backend/everything", "isogate://stats", "isogate://tools"} {
		res, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
		if err != nil || len(res.Contents) == 0 || res.Contents[0].Text == "" {
			t.Fatalf("reading %s: %v", uri, err)
		}
		text := res.Contents[0].Text
		switch uri {
		case "isogate://backends":
			if !strings.Contains(text, `"state": "healthy"`) {
				t.Fatalf("%s: %s", uri, text)
			}
		case "isogate://stats":
			if !strings.Contains(text, `"everything.get-sum"`) || !strings.Contains(text, `"bytes_returned"`) {
				t.Fatalf("%s does not count the call: %s", uri, text)
			}
		case "isogate://tools":
			if !strings.Contains(text, "everything.get-sum") {
				t.Fatalf("%s: %s", uri, text)
			}
		}
	}
}

func TestServeStdio(t *testing.T) {
	cs := connectStdio(t, "serve", "--config", writeConfig(t, ""))
	exercise(t, cs)
}

func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// startHTTP runs `isogate serve --http` and waits until it answers.
func startHTTP(t *testing.T, cfg string, env ...string) string {
	t.Helper()
	url, _ := startHTTPProcess(t, cfg, env...)
	return url
}

// startHTTPProcess is startHTTP that also returns the process.
func startHTTPProcess(t *testing.T, cfg string, env ...string) (string, *exec.Cmd) {
	t.Helper()
	url, cmd, _ := startHTTPLogged(t, cfg, env...)
	return url, cmd
}

// startHTTPLogged is startHTTPProcess that also returns the process's log.
func startHTTPLogged(t *testing.T, cfg string, env ...string) (string, *exec.Cmd, *testutil.Buffer) {
	t.Helper()
	logs := &testutil.Buffer{}
	addr := freeAddr(t)
	cmd := exec.Command(binary, "serve", "--config", cfg, "--http", addr)
	cmd.Env = append(os.Environ(), env...)
	stderr, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			t.Log(sc.Text())
			fmt.Fprintln(logs, sc.Text())
		}
	}()
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(15 * time.Second):
			cmd.Process.Kill()
			t.Error("isogate did not stop on SIGTERM")
		}
	})
	testutil.Eventually(t, 20*time.Second, func() bool { return healthy(addr) }, "isogate serve --http on %s to answer", addr)
	return "http://" + addr + "/mcp", cmd, logs
}

// wantAuthMode checks that the start-up line names the auth mode.
func wantAuthMode(t *testing.T, logs *testutil.Buffer, mode string) {
	t.Helper()
	var line string
	testutil.Eventually(t, 10*time.Second, func() bool {
		for _, l := range strings.Split(logs.String(), "\n") {
			if strings.Contains(l, "serving MCP over streamable HTTP") {
				line = l
				return true
			}
		}
		return false
	}, "no start-up line:\n%s", logs)
	if !strings.Contains(line, " auth="+mode+" ") {
		t.Errorf("the start-up line does not say auth=%s: %s", mode, line)
	}
}

// healthy reports whether the gateway at addr answers /healthz.
func healthy(addr string) bool {
	resp, err := http.Get("http://" + addr + "/healthz")
	if err != nil {
		return false
	}
	resp.Body.Close()
	return true
}

type bearer struct {
	token string
	base  http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.base.RoundTrip(r)
}

func connectHTTP(t *testing.T, url, token string) (*mcp.ClientSession, error) {
	t.Helper()
	hc := &http.Client{Transport: http.DefaultTransport}
	if token != "" {
		hc.Transport = bearer{token, http.DefaultTransport}
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "test-client"}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: hc}, nil)
	if err == nil {
		t.Cleanup(func() { cs.Close() })
	}
	return cs, err
}

// TestServeHTTP serves without auth; the start-up line says auth=none.
func TestServeHTTP(t *testing.T) {
	url, _, logs := startHTTPLogged(t, writeConfig(t, ""), "ISOGATE_SERVER__CONSOLE__ENABLED=true")
	wantAuthMode(t, logs, "none")
	cs, err := connectHTTP(t, url, "")
	if err != nil {
		t.Fatal(err)
	}
	exercise(t, cs)
	// The serving line (which `make run` relies on) gives the URL and a
	// client configuration to paste (wantAuthMode has seen it).
	out := logs.String()
	if !strings.Contains(out, `msg="serving MCP over streamable HTTP" url=`+url) &&
		!strings.Contains(out, "serving MCP over streamable HTTP url="+url) {
		t.Errorf("no serving line with the URL:\n%s", out)
	}
	if !strings.Contains(out, `{\"mcpServers\": {\"isogate\": {\"type\": \"http\", \"url\": \"`+url+`\"}}}`) {
		t.Errorf("no client configuration on the serving line:\n%s", out)
	}
	// With the console on, a line names its URL (issue 43, 6: none did).
	console := strings.TrimSuffix(url, "/mcp") + "/console"
	if !strings.Contains(out, "serving the console url="+console) && !strings.Contains(out, `msg="serving the console" url=`+console) {
		t.Errorf("no line names the console's URL %s:\n%s", console, out)
	}
}

// pastedClientConfig reads the client configuration of the serving line
// and returns its URL and headers, as a client the line was pasted into
// would use them, with ${ISOGATE_TOKEN} expanded to token.
func pastedClientConfig(t *testing.T, logs *testutil.Buffer, token string) (string, map[string]string) {
	t.Helper()
	m := regexp.MustCompile(`client_config="((?:[^"\\]|\\.)*)"`).FindStringSubmatch(logs.String())
	if m == nil {
		t.Fatalf("no client_config on the serving line:\n%s", logs)
	}
	raw, err := strconv.Unquote(`"` + m[1] + `"`)
	if err != nil {
		t.Fatalf("client_config %s: %v", m[1], err)
	}
	var cfg struct {
		MCPServers map[string]struct {
			URL     string            `json:"url"`
			Headers map[string]string `json:"headers"`
		} `json:"mcpServers"`
	}
	if err := json.Unmarshal([]byte(os.Expand(raw, func(k string) string {
		if k == "ISOGATE_TOKEN" {
			return token
		}
		return "$" + k
	})), &cfg); err != nil {
		t.Fatalf("client_config %s: %v", raw, err)
	}
	s := cfg.MCPServers["isogate"]
	return s.URL, s.Headers
}

// headers is a RoundTripper that adds fixed request headers.
type headers struct {
	set  map[string]string
	base http.RoundTripper
}

func (h headers) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, v := range h.set {
		r.Header.Set(k, v)
	}
	return h.base.RoundTrip(r)
}

// TestServeHTTPWithToken serves in token mode (server.auth_token); the
// start-up line says auth=token.
func TestServeHTTPWithToken(t *testing.T) {
	url, _, logs := startHTTPLogged(t, writeConfig(t, ""), "ISOGATE_SERVER__AUTH_TOKEN=s3cret", "OTHER_BACKEND_TOKEN=0ther-secret")
	wantAuthMode(t, logs, "token")
	if _, err := connectHTTP(t, url, ""); err == nil {
		t.Fatal("connected without the token")
	}
	if _, err := connectHTTP(t, url, "wrong"); err == nil {
		t.Fatal("connected with a wrong token")
	}
	cs, err := connectHTTP(t, url, "s3cret")
	if err != nil {
		t.Fatal(err)
	}
	exercise(t, cs)
	// The client configuration on the serving line, pasted with the token
	// in ISOGATE_TOKEN, connects (issue 43, 6: it had no headers: 401).
	pastedURL, pastedHeaders := pastedClientConfig(t, logs, "s3cret")
	client := mcp.NewClient(&mcp.Implementation{Name: "pasted-config"}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	pasted, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: pastedURL,
		HTTPClient: &http.Client{Transport: headers{pastedHeaders, http.DefaultTransport}}}, nil)
	if err != nil {
		t.Fatalf("the pasted client configuration (url %s, headers %v) does not connect: %v", pastedURL, pastedHeaders, err)
	}
	pasted.Close()
	// The backend's environment (server-everything's get-env) holds neither
	// the gateway's token nor other secrets of the gateway's environment.
	env, isErr := callText(t, cs, "call_tool_chain", map[string]any{"code": `return await everything.get_env({})`})
	if isErr || !strings.Contains(env, "PATH") || strings.Contains(env, "s3cret") || strings.Contains(env, "0ther-secret") {
		t.Fatalf("backend environment:\n%s", env)
	}
}

// TestServeRefusesPublicBindWithoutToken: a non-loopback address without
// a token is refused before any backend starts, and the message says how
// to set one (issue 33, 6: it read "e.sf.", came after the backends had
// started and did not name ISOGATE_SERVER__AUTH_TOKEN).
func TestServeRefusesPublicBindWithoutToken(t *testing.T) {
	_, stderr, code := runBinary(t, "", "serve", "--config", writeConfig(t, ""), "--http", "0.0.0.0:0")
	for _, want := range []string{"non-loopback address without server.auth_token", "e.g. auth_token: ${ISOGATE_TOKEN}", "ISOGATE_SERVER__AUTH_TOKEN"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q", want)
		}
	}
	if code != 2 || strings.Contains(stderr, "starting backends") {
		t.Fatalf("exit %d (want 2, before any backend starts), stderr %q", code, stderr)
	}
}

// TestShortTokenWarned: a server.auth_token shorter than 16 characters is
// accepted with a warning (issue 33, 6: a 5-character token was accepted
// silently); a long one is not warned about.
func TestShortTokenWarned(t *testing.T) {
	cfg := writeConfig(t, "")
	for token, warned := range map[string]bool{"abcde": true, "0123456789abcdef": false} {
		t.Setenv("ISOGATE_SERVER__AUTH_TOKEN", token)
		_, stderr, _ := runBinary(t, "", "backends", "--config", cfg, "--wait", "1ms")
		if got := strings.Contains(stderr, "shorter than 16: a client can guess it"); got != warned {
			t.Errorf("token of %d characters: warned %v, want %v:\n%s", len(token), got, warned, stderr)
		}
	}
}

func TestServeClaudeStyleConfig(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "claude_desktop_config.json")
	body := fmt.Sprintf(`{"mcpServers": {"everything": {"command": "node", "args": [%q, "stdio"]}}}`, everythingServer(t))
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	cs := connectStdio(t, "serve", "--config", path)
	waitForTool(t, cs, "echo", "everything.echo")
}

func TestConfigErrorsArePrecise(t *testing.T) {
	path := filepath.Join(t.TempDir(), "bad.yaml")
	os.WriteFile(path, []byte("sandbox:\n  timout: 3s\nbackends:\n  x:\n    transport: stdoi\n"), 0o600)
	_, stderr, code := runBinary(t, "", "backends", "--config", path)
	for _, want := range []string{`bad.yaml: unknown key "sandbox.timout" (did you mean "sandbox.timeout"?)`, "backends.x.transport"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
	if code != 2 {
		t.Fatalf("exit %d", code)
	}
}

// TestMCPServersTypoRefused: a typo in an mcpServers entry stops the
// gateway with a "did you mean", and an isogate file importing the same
// file names where the typo is.
func TestMCPServersTypoRefused(t *testing.T) {
	dir := t.TempDir()
	claude := filepath.Join(dir, "claude.json")
	os.WriteFile(claude, []byte(`{"mcpServers": {"memory": {"command": "node", "enviroment": {"MEMORY_FILE_PATH": "/tmp/m.jsonl"}}}}`), 0o600)
	iso := filepath.Join(dir, "isogate.yaml")
	os.WriteFile(iso, []byte("import: claude.json\nsandbox:\n  timeout: 5s\n"), 0o600)
	for _, path := range []string{claude, iso} {
		_, stderr, code := runBinary(t, "", "serve", "--config", path)
		if code != 2 || !strings.Contains(stderr, `unknown key "mcpServers.memory.enviroment" (did you mean "mcpServers.memory.env"?)`) {
			t.Errorf("%s: exit %d, stderr:\n%s", filepath.Base(path), code, stderr)
		}
	}
}

// TestDurableAllWithoutHMACKeyWarned: sandbox.durable: all on Redis
// without store.hmac_key journals every call, yet no replica ever takes a
// task over (the taker fails it with REPLICA_LOST): found in a tryout with
// two replicas, where the only sign was the failed task. Such a start is
// now warned about; with the key, or without Redis, it is not.
func TestDurableAllWithoutHMACKeyWarned(t *testing.T) {
	srv := redistest.ForTest(t)
	const warning = "sandbox.durable: all without store.hmac_key"
	for _, c := range []struct {
		extra  string
		warned bool
	}{
		{"  durable: all\nstore:\n  redis_url: " + srv.URL() + "\n", true},
		{"  durable: all\nstore:\n  redis_url: " + srv.URL() + "\n  hmac_key: tryout-hmac-key-0123456789\n", false},
		{"  durable: all\n", false},
		{"store:\n  redis_url: " + srv.URL() + "\n", false},
	} {
		_, stderr, _ := runBinary(t, "", "backends", "--config", writeConfig(t, c.extra), "--wait", "1ms")
		if got := strings.Contains(stderr, warning); got != c.warned {
			t.Errorf("%q: warned %v, want %v:\n%s", c.extra, got, c.warned, stderr)
		}
	}
}
