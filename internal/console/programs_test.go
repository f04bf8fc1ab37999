package console_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/isogate/isogate/config"
	"github.com/isogate/isogate/internal/app"
	"github.com/isogate/isogate/internal/backend"
	"github.com/isogate/isogate/internal/testutil"
)

// TestConsoleProgramsPage drives the Programs page in headless Chromium,
// with hostile principal names, descriptions and code: the list (owner,
// description, calls), a program's versions with who saved them and a
// diff between two, making version 1 current, publishing to everyone and
// withdrawing it, "save as program" on a run's page (the run's code, the
// parameters it reads), and a version made stale by its backend's schema
// changing, shown with the checker's diagnostics. On every page nothing
// hostile runs or becomes an element, and the hostile text is shown as
// text.
func TestConsoleProgramsPage(t *testing.T) {
	browser := startBrowser(t)
	h := newHostile(t)
	admin, agent := short("PRINCIPAL-ADMIN"), short("PRINCIPAL-AGENT")
	const adminTok, agentTok = "programs-admin-token-0123456789ab", "programs-agent-token-0123456789ab"

	shop := mcp.NewServer(&mcp.Implementation{Name: "shop"}, nil)
	refundTakes := func(schema string) {
		shop.AddTool(&mcp.Tool{Name: "refund", Description: "Refunds an order.", InputSchema: json.RawMessage(schema)},
			func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "refunded"}}}, nil
			})
	}
	refundTakes(`{"type":"object","properties":{"id":{"type":"number"}},"required":["id"]}`)

	cfg := config.Default()
	cfg.Server.CacheDir = ""
	cfg.Store.DataDir = t.TempDir()
	cfg.Sandbox.Isolation = config.IsolationThread
	cfg.Sandbox.Timeout = 2 * time.Minute
	cfg.Server.Auth.Tokens = map[string]config.StaticToken{admin: {Token: adminTok}, agent: {Token: agentTok}}
	cfg.Server.Auth.Admins = []string{admin}
	cfg.Server.Console = config.ConsoleConfig{Enabled: true, SessionTTL: time.Hour} // its operators: server.auth.admins
	a, err := app.New(cfg, app.Options{Version: "programs-test", ExtraSpecs: []backend.Spec{backend.InMemory("shop", shop)}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	if err := a.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	wctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := a.Backends.WaitHealthy(wctx, "shop"); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(a.Surface.HTTPHandler())
	t.Cleanup(srv.Close)
	session, err := mcp.NewClient(&mcp.Implementation{Name: "agent"}, nil).Connect(context.Background(),
		&mcp.StreamableClientTransport{Endpoint: srv.URL + "/mcp", HTTPClient: &http.Client{Transport: bearer{agentTok}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { session.Close() })
	call := func(tool string, args map[string]any) *mcp.CallToolResult {
		t.Helper()
		res, err := session.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: args})
		if err != nil {
			t.Fatalf("%s: %v", tool, err)
		}
		return res
	}

	// The agent saves two versions and calls the second.
	for _, code := range []string{
		"// " + h.payload("SOURCE") + "\nconst id = args.id;\nreturn await shop.refund({ id })",
		"// " + h.payload("SOURCE") + "\nconst id = args.id + 1;\nreturn await shop.refund({ id })",
	} {
		if res := call("save_program", map[string]any{"name": "refund_one", "description": h.payload("PROGDESC"), "code": code}); res.IsError {
			t.Fatalf("save: %s", resultText(res))
		}
	}
	if res := call("program_refund_one", map[string]any{"id": 1}); res.IsError {
		t.Fatalf("call: %s", resultText(res))
	}
	run := call("call_tool_chain", map[string]any{"code": "// " + h.payload("RUNSRC") + "\nreturn await shop.refund({ id: args.order })"})
	runID, _ := run.Meta["isogate/run"].(string)
	if runID == "" {
		t.Fatalf("no run record: %s", resultText(run))
	}

	tab, tabCancel := chromedp.NewContext(browser)
	t.Cleanup(tabCancel)
	if err := chromedp.Do(tab); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Call(tab, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: watch}); err != nil {
		t.Fatal(err)
	}
	f := &fixture{url: srv.URL, tab: tab}
	clean := func(where string, tags ...string) string {
		t.Helper()
		var got struct {
			Watch    bool     `json:"watch"`
			Pwned    any      `json:"pwned"`
			CSP      []string `json:"csp"`
			Injected []string `json:"injected"`
			Text     string   `json:"text"`
		}
		v := f.eval(t, `JSON.stringify({watch: !!window.__watch, pwned: window.__pwned, csp: window.__csp || [], text: document.body.innerText,
			injected: Array.from(document.querySelectorAll(`+jsString(injected)+`), e => e.outerHTML.slice(0, 120))})`, false)
		if err := json.Unmarshal([]byte(v.(string)), &got); err != nil {
			t.Fatal(err)
		}
		if !got.Watch || got.Pwned != nil || len(got.CSP) > 0 || len(got.Injected) > 0 || len(h.reached()) > 0 {
			t.Errorf("%s: hostile text ran or became markup: pwned %v, csp %q, injected %q, listener %q", where, got.Pwned, got.CSP, got.Injected, h.reached())
		}
		if strings.ContainsRune(got.Text, '\u202e') {
			t.Errorf("%s: a right-to-left override is shown unescaped", where)
		}
		for _, tag := range tags {
			if !strings.Contains(got.Text, tag+markup) {
				t.Errorf("%s: %q is not shown as text", where, tag+markup)
			}
		}
		return got.Text
	}
	programURL := srv.URL + "/console/programs?" + url.Values{"owner": {agent}, "name": {"refund_one"}}.Encode()

	f.do(t, "sign in", chromedp.Navigate(srv.URL+"/console/login"), chromedp.WaitVisible("#token"),
		chromedp.SendKeys("#token", adminTok), chromedp.Click("#signin"), chromedp.WaitVisible("#backends"))

	f.do(t, "the list", chromedp.Navigate(srv.URL+"/console/programs"), chromedp.WaitVisible("#programs"))
	clean("the list", "PROGDESC", "PRINCIPAL-AGENT")
	if got := f.text(t, "#programs tbody tr td.calls"); got != "1" {
		t.Errorf("calls shown %q, want 1", got)
	}

	f.do(t, "a program's versions and their diff", chromedp.Navigate(programURL+"&a=1&b=2"), chromedp.WaitVisible("#diff"))
	text := clean("the program", "PROGDESC", "SOURCE", "PRINCIPAL-AGENT")
	if !strings.Contains(text, "Current version 2 of 2") {
		t.Errorf("the program page: %q", text)
	}
	if got := f.text(t, "#diff"); !strings.Contains(got, "- const id = args.id;") || !strings.Contains(got, "+ const id = args.id + 1;") ||
		!strings.Contains(got, "  return await shop.refund({ id })") {
		t.Errorf("the diff shows %q", got)
	}

	f.do(t, "make version 1 current", chromedp.Click(`section.version[data-version="1"] form.make-current button`))
	f.waitFor(t, "version 1 current", `document.body.innerText.includes("Current version 1 of 2")`)
	f.do(t, "publish", chromedp.SendKeys("#publish-to", "*"), chromedp.Click("#publish button"))
	f.waitFor(t, "published", `(document.querySelector("#published-to") || {}).innerText === "*"`)
	if res := call("programs", map[string]any{"action": "versions", "name": "refund_one"}); !strings.Contains(resultText(res), "current version 1 of 2; version 1 published to *") {
		t.Errorf("the agent's view after the console's actions: %s", resultText(res))
	}
	f.do(t, "unpublish", chromedp.Click("#unpublish button"))
	f.waitFor(t, "unpublished", `!document.querySelector("#published-to") && !!document.querySelector("#publish")`)

	f.do(t, "save a run as a program", chromedp.Navigate(srv.URL+"/console/record?id="+url.QueryEscape(runID)), chromedp.WaitVisible("#save-program"),
		chromedp.SendKeys("#save-name", "from_run"), chromedp.SendKeys("#save-description", h.payload("SAVEDESC")), chromedp.Click("#save"))
	f.waitFor(t, "the saved program's page", `(document.querySelector("#program-title") || {innerText: ""}).innerText.endsWith("/from_run")`)
	clean("the program saved from a run", "SAVEDESC", "RUNSRC", "PRINCIPAL-ADMIN")
	if res := call("programs", map[string]any{}); strings.Contains(resultText(res), "from_run") {
		t.Errorf("the operator's program is listed to the agent: %s", resultText(res))
	}
	list, err := a.Programs.Heads(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, hd := range list {
		if hd.Name == "from_run" && (hd.Owner != admin || !strings.Contains(string(hd.Cur.Params), `"order"`)) {
			t.Errorf("saved from the run: owner %q, parameters %s", hd.Owner, hd.Cur.Params)
		}
	}

	// The shop's refund now takes order_id: refund_one goes stale.
	refundTakes(`{"type":"object","properties":{"order_id":{"type":"string"}},"required":["order_id"]}`)
	testutil.Eventually(t, time.Minute, func() bool {
		st, _ := a.Programs.Stale(context.Background())
		return len(st) >= 2
	}, "refund_one's versions to be marked stale")
	f.do(t, "a stale program", chromedp.Navigate(programURL), chromedp.WaitVisible("pre.stale-diagnostics"))
	clean("the stale program", "PROGDESC", "SOURCE")
	if got := f.text(t, `section.version[data-version="1"] pre.stale-diagnostics`); !strings.Contains(got, "order_id") {
		t.Errorf("the stale version's diagnostics show %q", got)
	}
	f.do(t, "the list", chromedp.Navigate(srv.URL+"/console/programs"), chromedp.WaitVisible("#programs"))
	if got := f.text(t, `#programs tr[data-program$="/refund_one"] td.stale`); got != "2 stale" {
		t.Errorf("the list shows %q stale", got)
	}
}
