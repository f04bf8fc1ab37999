// Package interop tests isogate with MCP clients that are not ours: the
// official TypeScript SDK client (driven by the Node scripts in scripts/,
// sharing lib/connect.mjs) and the MCP Inspector CLI, both pinned in
// package-lock.json and installed by `make deps`.
//
// To add a case: write scripts/NAME.mjs that uses main() from
// lib/connect.mjs and returns one JSON-able object, then call
// runNode(t, "NAME.mjs", transportArgs...) from a Go test and judge the
// decoded report. Gateways are shared per transport (see gateways).
package interop

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/isogate/isogate/internal/testutil"
	"github.com/isogate/isogate/internal/testutil/fakeembed"
)

// Paths resolved once by TestMain.
var (
	repoRoot string // the checkout
	binary   string // isogate, built once for the package
	config   string // examples/isogate.yaml, the default config
	cacheDir string // the gateways' catalogue cache
	dataRoot string // holds each gateway's own $XDG_DATA_HOME (saved programs)
)

// testToken is the bearer token of the token-guarded HTTP gateway.
const testToken = "interop-secret-token"

func TestMain(m *testing.M) {
	fakeembed.RunIfRequested() // TestTypeScriptSDKSearchEmbeddings's endpoint
	os.Exit(run(m))
}

func run(m *testing.M) int {
	_, file, _, _ := runtime.Caller(0)
	repoRoot = filepath.Dir(filepath.Dir(file))
	config = filepath.Join(repoRoot, "examples", "isogate.yaml")
	for _, need := range []string{
		filepath.Join(repoRoot, "interop", "node_modules", "@modelcontextprotocol", "sdk"),
		filepath.Join(repoRoot, "examples", "node_modules", "@modelcontextprotocol", "server-everything"),
	} {
		if _, err := os.Stat(need); err != nil {
			fmt.Fprintf(os.Stderr, "interop: %s is missing: run `make deps`\n", need)
			return 1
		}
	}
	tmp, err := os.MkdirTemp("", "isogate-interop-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(tmp)
	cacheDir = filepath.Join(tmp, "cache")
	dataRoot = tmp
	binary = filepath.Join(tmp, "isogate")
	build := exec.Command("go", "build", "-o", binary, "./cmd/isogate")
	build.Dir = repoRoot
	if out, err := build.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "interop: building isogate: %v\n%s", err, out)
		return 1
	}
	defer gateways.stopAll()
	return m.Run()
}

// gatewayEnv is the environment of every isogate the tests start.
//
// Each gets a $XDG_DATA_HOME of its own, so the default store.data_dir
// (saved programs, served as skills too) is neither the developer's own
// nor a bbolt file another gateway of the tests holds.
func gatewayEnv(extra ...string) []string {
	env := []string{"ISOGATE_SERVER__CACHE_DIR=" + cacheDir}
	if dataHome, err := os.MkdirTemp(dataRoot, "data-"); err == nil {
		env = append(env, "XDG_DATA_HOME="+dataHome)
	}
	return append(os.Environ(), append(env, extra...)...)
}

// stdioArgs are the transport arguments of a script for a fresh stdio gateway.
func stdioArgs() []string {
	return []string{"--stdio", binary, "serve", "--config", config}
}

// httpGateway is one `isogate serve --http` process shared by the tests.
type httpGateway struct {
	url  string
	cmd  *exec.Cmd
	logs *testutil.Buffer // written by the stderr reader, read by tests
	err  error
}

// gatewayPool starts each kind of HTTP gateway once, on first use.
type gatewayPool struct {
	mu  sync.Mutex
	gws map[string]*httpGateway
}

var gateways = &gatewayPool{gws: map[string]*httpGateway{}}

// http returns the shared HTTP gateway with the given bearer token ("" for none).
func (p *gatewayPool) http(t *testing.T, token string) *httpGateway {
	t.Helper()
	p.mu.Lock()
	defer p.mu.Unlock()
	gw, ok := p.gws[token]
	if !ok {
		gw = startHTTP(token)
		p.gws[token] = gw
	}
	if gw.err != nil {
		t.Fatalf("HTTP gateway: %v\n%s", gw.err, gw.logs)
	}
	return gw
}

func (p *gatewayPool) stopAll() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, gw := range p.gws {
		if gw.cmd != nil && gw.cmd.Process != nil {
			_ = gw.cmd.Process.Signal(syscall.SIGTERM)
			done := make(chan struct{})
			go func() { _ = gw.cmd.Wait(); close(done) }()
			select {
			case <-done:
			case <-time.After(15 * time.Second):
				_ = gw.cmd.Process.Kill()
			}
		}
	}
}

// servingURL finds the address in the line isogate logs once its HTTP
// listener is open: "… serving MCP over streamable HTTP url=http://…/mcp …".
var servingURL = regexp.MustCompile(`serving MCP over streamable HTTP url=(\S+)`)

// startHTTP runs `isogate serve --http` on a loopback port the kernel
// picks and waits for the log line saying it serves, and where.
func startHTTP(token string) *httpGateway {
	var extra []string
	if token != "" {
		extra = append(extra, "ISOGATE_SERVER__AUTH_TOKEN="+token)
	}
	return startHTTPWith(config, extra...)
}

// startHTTPEnv is startHTTP with more environment (configuration).
func startHTTPEnv(env ...string) *httpGateway { return startHTTPWith(config, env...) }

// startHTTPWith is startHTTP with another configuration file and more
// environment.
func startHTTPWith(configFile string, env ...string) *httpGateway {
	gw := &httpGateway{logs: &testutil.Buffer{}}
	gw.cmd = exec.Command(binary, "serve", "--config", configFile, "--http", "127.0.0.1:0")
	// That line is read from the text log at info level, whatever the
	// environment of the test says.
	extra := append([]string{"ISOGATE_SERVER__LOG_FORMAT=text", "ISOGATE_SERVER__LOG_LEVEL=info"}, env...)
	gw.cmd.Env = gatewayEnv(extra...)
	stderr, err := gw.cmd.StderrPipe()
	if err != nil {
		gw.err = err
		return gw
	}
	if gw.err = gw.cmd.Start(); gw.err != nil {
		return gw
	}
	serving := make(chan string, 1)
	exited := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			fmt.Fprintln(gw.logs, sc.Text())
			if m := servingURL.FindStringSubmatch(sc.Text()); m != nil {
				select {
				case serving <- m[1]:
				default:
				}
			}
		}
		close(exited)
	}()
	select {
	case gw.url = <-serving:
	case <-exited:
		gw.err = fmt.Errorf("isogate serve --http exited before serving")
	case <-time.After(60 * time.Second):
		gw.err = fmt.Errorf("isogate serve --http did not say it serves within 60 s")
	}
	return gw
}

// runNode runs scripts/script with node and decodes the one JSON object it
// prints into a map. A script that reports {fatal: ...} fails the test.
func runNode(t *testing.T, script string, args ...string) map[string]any {
	t.Helper()
	var out map[string]any
	runNodeInto(t, &out, script, args...)
	return out
}

// runNodeInto is runNode decoding into v.
func runNodeInto(t *testing.T, v any, script string, args ...string) {
	t.Helper()
	raw := nodeReport(t, script, args...)
	var fatal struct{ Fatal, Stack any }
	if json.Unmarshal(raw, &fatal); fatal.Fatal != nil {
		t.Fatalf("%s: %v\n%v", script, fatal.Fatal, fatal.Stack)
	}
	if err := json.Unmarshal(raw, v); err != nil {
		t.Fatalf("%s: report %s: %v", script, raw, err)
	}
}

// nodeReport runs scripts/script with node and returns the one JSON object
// it prints, whatever it says.
func nodeReport(t *testing.T, script string, args ...string) json.RawMessage {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", append([]string{filepath.Join(repoRoot, "interop", "scripts", script)}, args...)...)
	cmd.Dir = filepath.Join(repoRoot, "interop")
	cmd.Env = gatewayEnv()
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	raw := bytes.TrimSpace(stdout.Bytes())
	if !json.Valid(raw) || !bytes.HasPrefix(raw, []byte("{")) {
		t.Fatalf("node %s: %v; stdout is not one JSON object:\n%s\nstderr:\n%s", script, err, stdout.String(), stderr.String())
	}
	return raw
}

// concurrently runs each case as a subtest, all at once. The cases mostly
// wait on child processes, so they are not held to -parallel (GOMAXPROCS,
// 2 on the CI machine) as t.Parallel subtests would be.
func concurrently(t *testing.T, cases map[string]func(t *testing.T)) {
	t.Helper()
	var wg sync.WaitGroup
	for name, f := range cases {
		wg.Add(1)
		go func() {
			defer wg.Done()
			t.Run(name, f)
		}()
	}
	wg.Wait()
}

// inspector runs the MCP Inspector CLI with args and decodes its JSON output.
func inspector(t *testing.T, args ...string) (map[string]any, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	bin := filepath.Join(repoRoot, "interop", "node_modules", ".bin", "mcp-inspector")
	cmd := exec.CommandContext(ctx, bin, append([]string{"--cli"}, args...)...)
	cmd.Dir = filepath.Join(repoRoot, "interop")
	cmd.Env = gatewayEnv()
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var out map[string]any
	if jerr := json.Unmarshal(stdout.Bytes(), &out); jerr != nil || err != nil {
		t.Fatalf("mcp-inspector --cli %s: %v / %v\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), err, jerr, stdout.String(), stderr.String())
	}
	return out, stderr.String()
}
