package console_test

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/isogate/isogate/config"
	"github.com/isogate/isogate/internal/app"
	"github.com/isogate/isogate/internal/backend"
)

// -screenshots writes the browser test's screenshots of every page to
// docs/console (the ones docs/operations.md shows); otherwise they go to a
// temporary directory.
var screenshots = flag.Bool("screenshots", false, "write the console screenshots to docs/console")

const (
	adminToken = "console-admin-token-0123456789"
	agentToken = "console-agent-token-0123456789"
)

// flaky is a backend the test takes down and brings back: while down,
// its connection is closed and every new one refused.
type flaky struct {
	server *mcp.Server
	mu     sync.Mutex
	down   bool
	conns  []*mcp.ServerSession
}

func (f *flaky) spec() backend.Spec {
	return backend.Spec{Backend: config.Backend{Name: "flaky", Transport: backend.TransportCustom},
		Dial: func(ctx context.Context) (mcp.Transport, error) {
			f.mu.Lock()
			defer f.mu.Unlock()
			if f.down {
				return nil, errors.New("flaky is down (test)")
			}
			ct, st := mcp.NewInMemoryTransports()
			ss, err := f.server.Connect(context.Background(), st, nil)
			if err != nil {
				return nil, err
			}
			f.conns = append(f.conns, ss)
			return ct, nil
		}}
}

func (f *flaky) setDown(down bool) {
	f.mu.Lock()
	f.down = down
	conns := f.conns
	f.conns = nil
	f.mu.Unlock()
	if down {
		for _, ss := range conns {
			ss.Close()
		}
	}
}

// fixture is a gateway with the console on, served over HTTP on loopback,
// and a browser signed in as its admin.
type fixture struct {
	url   string
	flaky *flaky
	agent *mcp.ClientSession
	tab   context.Context
	shots string
	calls chan string // what "work.slow" got, when it started
	a     *app.App
}

func newFixture(t *testing.T, browser context.Context) *fixture {
	t.Helper()
	f := &fixture{calls: make(chan string, 4)}
	work := mcp.NewServer(&mcp.Implementation{Name: "work"}, nil)
	mcp.AddTool(work, &mcp.Tool{Name: "write", Description: "Writes a note."}, func(_ context.Context, _ *mcp.CallToolRequest, in struct {
		Text string `json:"text"`
	}) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "written"}}}, nil, nil
	})
	mcp.AddTool(work, &mcp.Tool{Name: "slow", Description: "Takes until cancelled."}, func(ctx context.Context, _ *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
		f.calls <- "slow"
		<-ctx.Done()
		return nil, nil, ctx.Err()
	})
	mcp.AddTool(work, &mcp.Tool{Name: "echo", Description: "Echoes its text."}, func(_ context.Context, _ *mcp.CallToolRequest, in struct {
		Text string `json:"text"`
	}) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ECHOED " + in.Text}}}, nil, nil
	})
	mcp.AddTool(work, &mcp.Tool{Name: "fail", Description: "Reports a failure (isError)."}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "FAIL-TEXT: the disk is full"}}}, nil, nil
	})
	mcp.AddTool(work, &mcp.Tool{Name: "drop_all", Description: "Drops every note."}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "dropped"}}}, nil, nil
	})
	mcp.AddTool(work, &mcp.Tool{Name: "quick", Description: "Answers at once."}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}}, nil, nil
	})
	evil := mcp.NewServer(&mcp.Implementation{Name: "evil"}, nil)
	mcp.AddTool(evil, &mcp.Tool{Name: "lure",
		Description: `Innocent. <script>window.__xss = 1</script><img src=x onerror="window.__xss = 2"> Done.`},
		func(context.Context, *mcp.CallToolRequest, struct {
			Q string `json:"q" jsonschema:"<img src=x onerror=\"window.__xss = 3\">"`
		}) (*mcp.CallToolResult, any, error) {
			return nil, nil, nil
		})
	f.flaky = &flaky{server: mcp.NewServer(&mcp.Implementation{Name: "flaky"}, nil)}
	mcp.AddTool(f.flaky.server, &mcp.Tool{Name: "ping", Description: "Pings."}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "pong"}}}, nil, nil
	})

	cfg := config.Default()
	cfg.Server.CacheDir = ""
	cfg.Sandbox.Isolation = config.IsolationThread
	cfg.Sandbox.Timeout = 2 * time.Minute
	cfg.Server.Auth.Tokens = map[string]config.StaticToken{
		"ops":   {Token: adminToken, Scopes: []string{"isogate.admin"}},
		"agent": {Token: agentToken},
	}
	cfg.Server.Console = config.ConsoleConfig{Enabled: true, Admins: []string{"scope:isogate.admin"}, SessionTTL: time.Hour}
	workSpec := backend.InMemory("work", work)
	workSpec.Backend.Tools.Approve = []string{"write"}
	workSpec.Backend.Tools.Deny = []string{"drop*"}
	// A stdio backend (this test binary, see TestMain) whose stderr has a
	// notice, a harmless roots/list refusal and an error.
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	files := backend.Spec{Backend: config.Backend{Name: "files", Transport: config.TransportStdio, Command: exe,
		Env: map[string]string{backendEnv: "noisy", "NOISY_STDERR": "Secure MCP Filesystem Server running on stdio\n" +
			"Failed to request roots from client undefined: MCP error -32603: roots/list refused\n" +
			"Error: EACCES: permission denied, open '/srv/private'"}}}
	a, err := app.New(cfg, app.Options{Version: "console-test", ExtraSpecs: []backend.Spec{workSpec, backend.InMemory("evil", evil), f.flaky.spec(), files}})
	if err != nil {
		t.Fatal(err)
	}
	f.a = a
	t.Cleanup(func() { a.Close() })
	if err := a.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := a.Backends.WaitHealthy(ctx); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(a.Surface.HTTPHandler())
	t.Cleanup(srv.Close)
	f.url = srv.URL

	client := mcp.NewClient(&mcp.Implementation{Name: "agent"}, nil)
	f.agent, err = client.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: srv.URL + "/mcp",
		HTTPClient: &http.Client{Transport: bearer{agentToken}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.agent.Close() })

	f.shots = t.TempDir()
	if *screenshots {
		f.shots = filepath.Join("..", "..", "docs", "console")
		if err := os.MkdirAll(f.shots, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	var tabCancel context.CancelFunc
	f.tab, tabCancel = chromedp.NewContext(browser)
	t.Cleanup(tabCancel)
	// The tab is created here, on its own context: a tab first used under
	// a timeout context would close when that context ends.
	if err := chromedp.Do(f.tab); err != nil {
		t.Fatal(err)
	}
	return f
}

type bearer struct{ token string }

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}

// do runs browser steps, bounded so that a broken page fails the test
// instead of hanging it.
func (f *fixture) do(t *testing.T, what string, steps ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	ctx, cancel := context.WithTimeout(f.tab, 30*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, steps...); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

func (f *fixture) text(t *testing.T, sel string) string {
	t.Helper()
	v := f.eval(t, fmt.Sprintf(`(document.querySelector(%q) || {innerText: "<none>"}).innerText.trim()`, sel), false)
	s, _ := v.(string)
	return s
}

func (f *fixture) eval(t *testing.T, js string, await bool) any {
	t.Helper()
	ctx, cancel := context.WithTimeout(f.tab, 30*time.Second)
	defer cancel()
	var opts []chromedp.EvaluateOption
	if await {
		opts = append(opts, chromedp.EvalAwaitPromise)
	}
	v, err := chromedp.Run(ctx, chromedp.Evaluate[any](js, opts...))
	if err != nil {
		t.Fatalf("evaluating %s: %v", js, err)
	}
	return v
}

func (f *fixture) shot(t *testing.T, name string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(f.tab, 30*time.Second)
	defer cancel()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatalf("screenshot %s: %v", name, err)
	}
	if err := os.WriteFile(filepath.Join(f.shots, name+".png"), png, 0o644); err != nil {
		t.Fatal(err)
	}
}

// waitFor polls a JavaScript condition in the page until it holds; a
// navigation under way (a form's POST and its redirect) only delays it.
func (f *fixture) waitFor(t *testing.T, what, cond string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(f.tab, 30*time.Second)
	defer cancel()
	for {
		_, err := chromedp.Run(ctx, chromedp.Poll[bool](cond, chromedp.WithPollingInterval(50*time.Millisecond)))
		if err == nil {
			return
		}
		if ctx.Err() != nil || !(strings.Contains(err.Error(), "context") || strings.Contains(err.Error(), "navigated")) {
			t.Fatalf("waiting for %s: %v", what, err)
		}
	}
}

// chain runs a program for the agent in the background.
func (f *fixture) chain(code string) <-chan *mcp.CallToolResult {
	out := make(chan *mcp.CallToolResult, 1)
	go func() {
		res, err := f.agent.CallTool(context.Background(), &mcp.CallToolParams{Name: "call_tool_chain", Arguments: map[string]any{"code": code}})
		if err != nil {
			res = &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: err.Error()}}}
		}
		out <- res
	}()
	return out
}

func resultText(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// chromiumPath finds Debian's chromium (installed by make deps).
func chromiumPath() string {
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// startBrowser starts a headless Chromium for the test (stopped at its
// end), or skips the test when there is none.
func startBrowser(t *testing.T) context.Context {
	t.Helper()
	path := chromiumPath()
	if path == "" {
		t.Skip("chromium not installed (make deps installs it with apt-get): the console's browser tests are skipped")
	}
	opts := []chromedp.ExecAllocatorOption{chromedp.ExecPath(path), chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.NoFirstRun, chromedp.NoDefaultBrowserCheck, chromedp.UserDataDir(t.TempDir()), chromedp.WindowSize(1280, 900),
		chromedp.Flag("disable-quic", true), chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true), chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true)}
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	t.Cleanup(cancelAlloc)
	browser, cancelBrowser := chromedp.NewContext(alloc, chromedp.WithErrorf(t.Logf))
	t.Cleanup(cancelBrowser)
	if err := chromedp.Do(browser); err != nil {
		t.Skipf("chromium %s does not start (%v): the console's browser tests are skipped", path, err)
	}
	return browser
}

// TestConsoleInABrowser drives the console in headless Chromium: sign in,
// a backend going down and coming back, an approval answered from the
// page resuming its program, its run record replayed from the page
// (reproduced), a running program cancelled, markup in a tool's
// description and arguments staying inert, an action without the CSRF
// token refused, a non-admin refused; a screenshot of every page.
func TestConsoleInABrowser(t *testing.T) {
	f := newFixture(t, startBrowser(t))

	t.Run("non-admin gets 403", func(t *testing.T) {
		f.do(t, "sign in as the agent", chromedp.Navigate(f.url+"/console/login"), chromedp.WaitVisible("#token"),
			chromedp.SendKeys("#token", agentToken), chromedp.Click("#signin"), chromedp.WaitVisible("#refused"))
		if got := f.text(t, "#refused"); !strings.HasPrefix(got, "403") {
			t.Errorf("non-admin sign-in shows %q, want 403", got)
		}
		req, _ := http.NewRequest("GET", f.url+"/console/overview", nil)
		req.Header.Set("Authorization", "Bearer "+agentToken)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != 403 {
			t.Errorf("non-admin bearer: %d, want 403", res.StatusCode)
		}
	})

	t.Run("sign in", func(t *testing.T) {
		f.do(t, "open the console", chromedp.Navigate(f.url+"/console"), chromedp.WaitVisible("#token"))
		f.shot(t, "login")
		f.do(t, "sign in as ops", chromedp.SendKeys("#token", adminToken), chromedp.Click("#signin"), chromedp.WaitVisible("#backends"))
		if got := f.text(t, "#principal"); got != "ops" {
			t.Errorf("signed in as %q, want ops", got)
		}
		if got := f.text(t, "#version"); got != "console-test" {
			t.Errorf("version %q", got)
		}
	})

	t.Run("a backend goes down and comes back", func(t *testing.T) {
		f.do(t, "overview", chromedp.Navigate(f.url+"/console/overview"),
			chromedp.WaitVisible(`tr[data-backend="flaky"] td[data-state="healthy"]`))
		f.flaky.setDown(true)
		f.waitFor(t, "flaky shown down", `!!document.querySelector('tr[data-backend="flaky"] td.state.bad')`)
		f.shot(t, "overview-backend-down")
		f.flaky.setDown(false)
		f.waitFor(t, "flaky shown healthy again", `!!document.querySelector('tr[data-backend="flaky"] td[data-state="healthy"]')`)
		f.waitFor(t, "the stderr of files", `document.querySelectorAll('tr[data-backend="files"] ul.stderr li').length === 3`)
		if got := f.text(t, `tr[data-backend="files"] ul.stderr li:nth-child(2)`); !strings.HasPrefix(got, "notice Failed to request roots") || !strings.Contains(got, "harmless") {
			t.Errorf("the roots/list refusal shows %q: want a notice, said to be harmless", got)
		}
		if got := f.text(t, `tr[data-backend="files"] ul.stderr li.error`); !strings.HasPrefix(got, "error Error: EACCES") {
			t.Errorf("the error line shows %q", got)
		}
		f.shot(t, "overview")
	})

	t.Run("approve from the page and the program completes", func(t *testing.T) {
		done := f.chain(`const r = await work.write({text: "<img src=x onerror=\"window.__xss = 4\">\u202Egpj.exe"}); return "finished: " + JSON.stringify(r);`)
		f.do(t, "runs", chromedp.Navigate(f.url+"/console/runs"))
		f.waitFor(t, "the live run waiting for approval", `!!document.querySelector('#live-runs tr[data-record] a.waiting')`)
		f.do(t, "the live run's page", chromedp.Click(`#live-runs tr[data-record] td a`))
		f.waitFor(t, "the live run's page", `!!document.querySelector('#waiting') && document.querySelector('#outcome').dataset.state === "running"`)
		f.do(t, "approvals", chromedp.Navigate(f.url+"/console/approvals"))
		f.waitFor(t, "the approval", `!!document.querySelector('section.approval')`)
		args := f.text(t, "section.approval pre.args")
		if !strings.Contains(args, `\u202e`) || strings.Contains(args, "\u202e") {
			t.Errorf("arguments shown as %q: the right-to-left override is not made visible", args)
		}
		if n := f.eval(t, `document.querySelectorAll('section.approval img').length`, false); n != float64(0) {
			t.Errorf("%v img elements in the approval: the arguments' markup was not escaped", n)
		}
		f.shot(t, "approvals")
		f.do(t, "approve", chromedp.Click("section.approval button.approve"))
		f.waitFor(t, "the approval answered", `!!document.querySelector('#no-approvals')`)
		select {
		case res := <-done:
			if res.IsError || !strings.Contains(resultText(res), "finished") {
				t.Fatalf("the approved program ended with %q", resultText(res))
			}
		case <-time.After(30 * time.Second):
			t.Fatal("the program did not resume after the approval")
		}
		f.do(t, "runs", chromedp.Navigate(f.url+"/console/runs"), chromedp.WaitVisible(`#records tr[data-record]`))
		f.do(t, "the run record", chromedp.Click(`#records tr[data-record] a`), chromedp.WaitVisible("#timeline"))
		if got := f.text(t, "#timeline"); !strings.Contains(got, "work.write") {
			t.Errorf("the call timeline shows %q", got)
		}
		if got := f.text(t, "p.approval-wait"); !strings.Contains(got, "for approval, approved by ops on the console") {
			t.Errorf("the approval wait shows %q", got)
		}
		f.do(t, "replay the run", chromedp.Click("#replay"), chromedp.WaitVisible("#replay-verdict"))
		if got := f.text(t, "#replay-verdict"); got != "reproduced" {
			t.Errorf("the replay of the approved run shows %q (%s), want reproduced", got, f.text(t, "#replay-outcome"))
		}
		if got := f.text(t, "#replay-result"); !strings.Contains(got, "finished") {
			t.Errorf("the replayed result shows %q", got)
		}
		f.shot(t, "run-replayed")
	})

	t.Run("a run's page shows the whole run", func(t *testing.T) {
		res := <-f.chain(`console.log("CONSOLE-LINE-7"); const e = await work.echo({text: "ARG-VALUE-9"}); await work.fail({}); return e`)
		id, _ := res.Meta["isogate/run"].(string)
		if !res.IsError || id == "" {
			t.Fatalf("the failing program ended with %q (run %q)", resultText(res), id)
		}
		f.do(t, "the run's page", chromedp.Navigate(f.url+"/console/record?id="+id), chromedp.WaitVisible("#timeline"))
		if got := f.text(t, `tr.call-detail[data-seq="1"] pre.call-args`); !strings.Contains(got, `"text": "ARG-VALUE-9"`) {
			t.Errorf("the first call's arguments show %q", got)
		}
		if got := f.text(t, `tr.call-detail[data-seq="1"] pre.call-result`); !strings.Contains(got, "ECHOED ARG-VALUE-9") {
			t.Errorf("the first call's result shows %q", got)
		}
		if got := f.text(t, `tr.call[data-seq="2"] td.call-outcome`); !strings.Contains(got, "FAIL-TEXT: the disk is full") {
			t.Errorf("the failed call's outcome shows %q", got)
		}
		if got := f.text(t, "#console"); got != "CONSOLE-LINE-7" {
			t.Errorf("the console shows %q", got)
		}
		code := f.text(t, "#outcome-code")
		if code != res.Meta["isogate/code"] || code == "" {
			t.Errorf("the run's code shows %q, the agent got %v", code, res.Meta["isogate/code"])
		}
		if got := f.text(t, "#run-error"); got == "" || strings.HasPrefix(got, code) {
			t.Errorf("the run's error shows %q: want its message, without the code again", got)
		}
		f.shot(t, "run-record")
	})

	t.Run("cancel a running program", func(t *testing.T) {
		done := f.chain(`await work.quick(); await work.slow(); return "not cancelled";`)
		<-f.calls
		f.do(t, "runs", chromedp.Navigate(f.url+"/console/runs"))
		f.waitFor(t, "the live run", `!!document.querySelector('#live-runs tr[data-run]') && document.querySelector('#live-runs td.calls').textContent === "1"`)
		f.shot(t, "runs")
		f.do(t, "cancel", chromedp.Click("#live-runs button.cancel"))
		select {
		case res := <-done:
			if strings.Contains(resultText(res), "not cancelled") {
				t.Fatalf("the program was not cancelled: %q", resultText(res))
			}
		case <-time.After(30 * time.Second):
			t.Fatal("the program did not end after cancel")
		}
		f.waitFor(t, "no live run", `!!document.querySelector('#no-live-runs')`)
	})

	t.Run("markup in a tool renders inert", func(t *testing.T) {
		f.do(t, "tool page", chromedp.Navigate(f.url+"/console/tools?q=lure&name=evil.lure"), chromedp.WaitVisible("#declaration"))
		desc := f.text(t, "#description")
		if !strings.Contains(desc, "<script>") || !strings.Contains(desc, "<img") {
			t.Errorf("the description shows %q: want the markup as text", desc)
		}
		if n := f.eval(t, `document.querySelectorAll('#tool img, #tool script').length`, false); n != float64(0) {
			t.Errorf("%v elements made of the tool's text", n)
		}
		if v := f.eval(t, `String(window.__xss)`, false); v != "undefined" {
			t.Errorf("window.__xss = %v: the tool's markup ran", v)
		}
		if got := f.text(t, "#declaration"); !strings.Contains(got, "lure") {
			t.Errorf("declaration %q", got)
		}
	})

	t.Run("denied tools are listed with their rule", func(t *testing.T) {
		f.do(t, "tools of work", chromedp.Navigate(f.url+"/console/tools?q=work&name=work.write"), chromedp.WaitVisible("#denied-tools"))
		if got := f.text(t, `#denied-tools tr[data-tool="work.drop_all"]`); !strings.Contains(got, "backends.work.tools.deny: drop*") {
			t.Errorf("the denied tool shows %q", got)
		}
		if got := f.text(t, "#policy"); got != "every call needs a person's approval" {
			t.Errorf("work.write's policy shows %q", got)
		}
		f.shot(t, "tools")
	})

	t.Run("an action without the CSRF token is refused", func(t *testing.T) {
		done := f.chain(`await work.slow(); return "not cancelled";`)
		<-f.calls
		f.do(t, "runs", chromedp.Navigate(f.url+"/console/runs"))
		f.waitFor(t, "the live run", `!!document.querySelector('#live-runs tr[data-run]')`)
		id := f.eval(t, `document.querySelector('#live-runs tr[data-run]').dataset.run`, false)
		status := f.eval(t, fmt.Sprintf(`fetch("/console/runs/cancel", {method: "POST", body: new URLSearchParams({id: %q})}).then(r => r.status)`, id), true)
		if status != float64(403) {
			t.Errorf("cancel without the CSRF token: %v, want 403", status)
		}
		select {
		case res := <-done:
			t.Fatalf("the run ended (%q) after a POST without the CSRF token", resultText(res))
		default:
		}
		status = f.eval(t, fmt.Sprintf(`fetch("/console/runs/cancel", {method: "POST", body: new URLSearchParams({id: %q, csrf: document.querySelector('input[name=csrf]').value})}).then(r => r.status)`, id), true)
		if status != float64(200) { // redirected to the runs page
			t.Errorf("cancel with the CSRF token: %v", status)
		}
		<-done
	})

	t.Run("audit and metrics", func(t *testing.T) {
		f.do(t, "audit", chromedp.Navigate(f.url+"/console/audit?principal=agent"), chromedp.WaitVisible("#audit"))
		if got := f.text(t, "#audit"); !strings.Contains(got, "work.write") || !strings.Contains(got, "program_run") {
			t.Errorf("audit shows %q", got)
		}
		f.shot(t, "audit")
		for range 20 { // calls before the page opens
			if _, err := f.agent.CallTool(context.Background(), &mcp.CallToolParams{Name: "call_tool_chain",
				Arguments: map[string]any{"code": `await work.quick(); await flaky.ping(); return 1`}}); err != nil {
				t.Fatal(err)
			}
		}
		// The page has the calls on arrival, from the gateway's history:
		// read right after it loaded, before any event could arrive.
		f.do(t, "metrics", chromedp.Navigate(f.url+"/console/metrics"))
		points := f.eval(t, `Number(document.querySelector('#chart-calls').dataset.points || 0)`, false)
		top := f.eval(t, `Number(document.querySelector('#chart-calls').dataset.max || 0)`, false)
		if p, _ := points.(float64); p < 1 {
			t.Errorf("the calls chart has %v points on arrival", points)
		}
		if m, _ := top.(float64); m <= 0 {
			t.Errorf("the calls chart's highest value on arrival is %v: the calls made before are not in it", top)
		}
		if w := f.eval(t, `document.querySelector('#chart-calls').clientWidth / document.querySelector('#chart-calls').parentElement.clientWidth`, false); w.(float64) < 0.95 {
			t.Errorf("the chart uses %.0f%% of its card's width", 100*w.(float64))
		}
		f.shot(t, "metrics")
	})
}
