package console_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
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

// backendEnv makes the test binary a stdio backend (see TestMain).
const backendEnv = "ISOGATE_CONSOLE_TEST_BACKEND"

// TestMain runs the tests, or, with backendEnv=noisy, is the "noisy"
// stdio backend of TestConsoleHostileText: it prints hostile stderr lines,
// then serves one tool.
func TestMain(m *testing.M) {
	if os.Getenv(backendEnv) == "noisy" {
		for _, l := range strings.Split(os.Getenv("NOISY_STDERR"), "\n") {
			fmt.Fprintln(os.Stderr, l)
		}
		s := mcp.NewServer(&mcp.Implementation{Name: "noisy"}, nil)
		mcp.AddTool(s, &mcp.Tool{Name: "hum", Description: "Hums."}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "hmm"}}}, nil, nil
		})
		_ = s.Run(context.Background(), &mcp.StdioTransport{})
		return
	}
	dataHome, err := testutil.DataHome()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dataHome)
	os.Exit(code)
}

// hostile makes the payloads and counts what reached its loopback
// listener (a payload that ran, or markup that loaded or navigated).
type hostile struct {
	hit  string // the listener's URL
	mu   sync.Mutex
	hits []string
}

func newHostile(t *testing.T) *hostile {
	h := &hostile{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.mu.Lock()
		h.hits = append(h.hits, r.URL.String())
		h.mu.Unlock()
	}))
	t.Cleanup(srv.Close)
	h.hit = srv.URL
	return h
}

func (h *hostile) reached() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.hits...)
}

// markup is what every payload starts with after its tag: the text the
// page must show as text.
const markup = " <img src=x class=pwn onerror="

// payload is hostile text tagged with where it goes: markup that would run
// script (an inline handler, a script element, svg onload), attribute and
// quote breakers, a template literal, a javascript: link, a meta refresh
// and an image aimed at the listener, and a right-to-left override.
func (h *hostile) payload(tag string) string {
	return tag + markup + `"__pwned=1;fetch('` + h.hit + `/onerror')">` +
		`</script><script class=pwn>__pwned=1</script></pre></textarea>` +
		`"><svg class=pwn onload=__pwned=1>` +
		`'><svg class=pwn onload='__pwned=1'>` +
		"`${__pwned=1}` " +
		`<a class=pwn href="javascript:__pwned=1">link</a> ` +
		`<meta http-equiv=refresh content="0;url=` + h.hit + `/meta">` +
		`<img class=pwn src="` + h.hit + `/img">` +
		"\u202Egpj.exe"
}

// short is a payload small enough for a tool or principal name.
func short(tag string) string {
	return tag + markup + `__pwned=1>"'><svg class=pwn onload=__pwned=1>${__pwned=1}` + "\u202Egpj"
}

// sse is text that would end a server-sent event early and start a
// forged one, if a line break other than "\n" reached the stream.
const sse = "\r\revent: live\rdata: SPOOFED\r\n\r\n"

// jsString is s as a JavaScript string literal, markup kept as is.
func jsString(s string) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)
	return strings.TrimSpace(b.String())
}

// watch is installed in every page before its own scripts: it counts the
// Content-Security-Policy violations (an inline handler or script that the
// escaping let through would be one).
const watch = `window.__watch = true;
document.addEventListener("securitypolicyviolation", function (e) {
  (window.__csp = window.__csp || []).push(e.violatedDirective + " " + e.blockedURI + " " + (e.sample || ""));
});`

// injected finds elements made of hostile text: no console page has any
// of these of its own.
const injected = `img, svg, iframe, object, embed, meta[http-equiv], script:not([src]), .pwn, [onerror], [onload], a[href^="javascript" i]`

// TestConsoleHostileText drives every console page in headless Chromium
// against a gateway whose backends, programs and principals are hostile:
// tool names, titles, annotations, descriptions, schema properties,
// results, error texts, backend stderr and dial errors, program source,
// arguments, intent, console lines, thrown errors and principal names all
// carry markup, quote breakers, javascript: URLs, template literals,
// right-to-left overrides and server-sent-event line breaks. On every page
// (overview, tools, a tool, runs, a run record and its replay, approvals,
// audit, metrics, and what the URL reflects) and through the live updates
// over the event stream: nothing runs (window.__pwned, the loopback
// listener), no element is made of the hostile text, no CSP violation is
// even attempted, no right-to-left override reaches the page unescaped,
// and the hostile text is shown, as text.
func TestConsoleHostileText(t *testing.T) {
	browser := startBrowser(t)
	h := newHostile(t)

	// Hostile principals: the admin who signs in, and the agent whose
	// runs and approvals the admin sees.
	admin, agent := short("PRINCIPAL-ADMIN"), short("PRINCIPAL-AGENT")+sse
	const adminTok, agentTok = "xss-admin-token-0123456789abcdef", "xss-agent-token-0123456789abcdef"

	// The hostile backend: every text it gives the gateway is a payload.
	approveName := short("TOOL-APPROVE")
	failName := "javascript:__pwned=1//TOOL-FAIL"
	prop := short("PROPERTY")
	evil := mcp.NewServer(&mcp.Implementation{Name: "evil", Title: h.payload("SERVER-TITLE")}, nil)
	schema := map[string]any{"type": "object", "properties": map[string]any{
		prop: map[string]any{"type": "string", "description": h.payload("PROP-DESC")}}}
	for _, name := range []string{approveName, failName, "echo"} {
		evil.AddTool(&mcp.Tool{Name: name, Title: h.payload("TITLE"), Description: h.payload("DESC"), InputSchema: schema,
			Annotations: &mcp.ToolAnnotations{Title: h.payload("ANNOTATION")}},
			func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				switch req.Params.Name {
				case failName:
					return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: h.payload("TOOL-ERROR")}}}, nil
				}
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: h.payload("TOOL-RESULT")}}}, nil
			})
	}
	// A denied tool: the Tools page lists it, with the rule that denies it.
	deniedName := short("TOOL-DENIED")
	evil.AddTool(&mcp.Tool{Name: deniedName, Description: h.payload("DENIED-DESC"), InputSchema: schema},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{}, nil
		})
	evilSpec := backend.InMemory("evil", evil)
	evilSpec.Backend.Tools.Approve = []string{"TOOL-APPROVE*"}
	evilSpec.Backend.Tools.Deny = []string{"TOOL-DENIED*"}
	broken := backend.Spec{Backend: config.Backend{Name: "broken", Transport: backend.TransportCustom},
		Dial: func(context.Context) (mcp.Transport, error) { return nil, errors.New(h.payload("DIAL-ERROR")) }}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	noisy := backend.Spec{Backend: config.Backend{Name: "noisy", Transport: config.TransportStdio, Command: exe,
		Env: map[string]string{backendEnv: "noisy", "NOISY_STDERR": h.payload("STDERR") + "\n" + "event: live\ndata: " + h.payload("STDERR-DATA") + sse}}}

	cfg := config.Default()
	cfg.Server.CacheDir = ""
	cfg.Sandbox.Isolation = config.IsolationThread
	cfg.Sandbox.Timeout = 2 * time.Minute
	cfg.Server.Auth.Tokens = map[string]config.StaticToken{
		admin: {Token: adminTok, Scopes: []string{"isogate.admin"}},
		agent: {Token: agentTok},
	}
	cfg.Server.Console = config.ConsoleConfig{Enabled: true, Admins: []string{"scope:isogate.admin"}, SessionTTL: time.Hour}
	a, err := app.New(cfg, app.Options{Version: "xss-test", ExtraSpecs: []backend.Spec{evilSpec, broken, noisy}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	if err := a.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	wctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := a.Backends.WaitHealthy(wctx, "evil", "noisy"); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(a.Surface.HTTPHandler())
	t.Cleanup(srv.Close)
	client := mcp.NewClient(&mcp.Implementation{Name: "agent"}, nil)
	session, err := client.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: srv.URL + "/mcp",
		HTTPClient: &http.Client{Transport: bearer{agentTok}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { session.Close() })

	tab, tabCancel := chromedp.NewContext(browser)
	t.Cleanup(tabCancel)
	if err := chromedp.Do(tab); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Call(tab, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: watch}); err != nil {
		t.Fatal(err)
	}
	f := &fixture{url: srv.URL, agent: session, tab: tab}

	// clean checks the page now shown: nothing ran, nothing was made of
	// the hostile text, and the texts of tags are shown as text.
	clean := func(t *testing.T, where string, tags ...string) {
		t.Helper()
		var got struct {
			Watch    bool     `json:"watch"`
			Pwned    any      `json:"pwned"`
			CSP      []string `json:"csp"`
			Injected []string `json:"injected"`
			Text     string   `json:"text"`
			URL      string   `json:"url"`
		}
		v := f.eval(t, `JSON.stringify({watch: !!window.__watch, pwned: window.__pwned, csp: window.__csp || [], url: location.href, text: document.body.innerText,
			injected: Array.from(document.querySelectorAll(`+jsString(injected)+`), e => e.outerHTML.slice(0, 120))})`, false)
		if err := json.Unmarshal([]byte(v.(string)), &got); err != nil {
			t.Fatal(err)
		}
		if !got.Watch {
			t.Fatalf("%s: the violation watch is not installed", where)
		}
		if got.Pwned != nil {
			t.Errorf("%s: window.__pwned = %v: hostile text ran", where, got.Pwned)
		}
		if len(got.CSP) > 0 {
			t.Errorf("%s: Content-Security-Policy violations (hostile text made into script): %q", where, got.CSP)
		}
		if len(got.Injected) > 0 {
			t.Errorf("%s: elements made of hostile text: %q", where, got.Injected)
		}
		if hits := h.reached(); len(hits) > 0 {
			t.Errorf("%s: the listener was reached: %q", where, hits)
		}
		if !strings.HasPrefix(got.URL, srv.URL+"/console/") {
			t.Errorf("%s: the page navigated to %s", where, got.URL)
		}
		if strings.ContainsRune(got.Text, '\u202e') {
			t.Errorf("%s: a right-to-left override is shown unescaped", where)
		}
		if strings.Contains(got.Text, "SPOOFED") && !strings.Contains(got.Text, `\u000ddata: SPOOFED`) {
			t.Errorf("%s: a forged line shows as the page's own: %q", where, got.Text)
		}
		for _, tag := range tags {
			if !strings.Contains(got.Text, tag+markup) {
				t.Errorf("%s: %q is not shown as text: %q", where, tag+markup, got.Text)
			}
		}
	}

	t.Run("the CSP forbids inline script", func(t *testing.T) {
		for _, path := range []string{"/console/login", "/console/overview", "/console/static/console.js", "/console/record?id=" + url.QueryEscape(h.payload("ID"))} {
			req, _ := http.NewRequest("GET", srv.URL+path, nil)
			req.Header.Set("Authorization", "Bearer "+adminTok)
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			res.Body.Close()
			csp := map[string]string{}
			for _, d := range strings.Split(res.Header.Get("Content-Security-Policy"), ";") {
				name, value, _ := strings.Cut(strings.TrimSpace(d), " ")
				csp[name] = value
			}
			for name, want := range map[string]string{"default-src": "'none'", "script-src": "'self'", "base-uri": "'none'",
				"frame-ancestors": "'none'", "form-action": "'self'"} {
				if csp[name] != want {
					t.Errorf("%s: Content-Security-Policy %s %q, want %q", path, name, csp[name], want)
				}
			}
			if _, ok := csp["script-src-attr"]; ok {
				t.Errorf("%s: a script-src-attr directive: %q", path, res.Header.Get("Content-Security-Policy"))
			}
			if res.Header.Get("X-Content-Type-Options") != "nosniff" {
				t.Errorf("%s: X-Content-Type-Options %q", path, res.Header.Get("X-Content-Type-Options"))
			}
			if strings.HasPrefix(path, "/console/record") && (res.StatusCode != 404 || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/plain")) {
				t.Errorf("an unknown record reflected: %d %s, want 404 text/plain", res.StatusCode, res.Header.Get("Content-Type"))
			}
		}
	})

	t.Run("sign in as a hostile principal", func(t *testing.T) {
		f.do(t, "sign in", chromedp.Navigate(srv.URL+"/console/login"), chromedp.WaitVisible("#token"),
			chromedp.SendKeys("#token", adminTok), chromedp.Click("#signin"), chromedp.WaitVisible("#backends"))
		clean(t, "overview after sign-in", "PRINCIPAL-ADMIN")
		// The browser enforces the policy: an inline handler is refused
		// and reported, so the watch above would see one.
		f.eval(t, `document.body.insertAdjacentHTML("beforeend", '<img src="data:," id="probe" onerror="window.__probe = 1">')`, false)
		f.waitFor(t, "the probe's violation", `(window.__csp || []).length > 0`)
		if v := f.eval(t, `String(window.__probe)`, false); v != "undefined" {
			t.Fatalf("an inline handler ran (window.__probe = %v): the CSP does not forbid inline script", v)
		}
		f.eval(t, `document.getElementById("probe").remove(); window.__csp = []`, false)
	})

	t.Run("overview: stderr and a dial error, live", func(t *testing.T) {
		f.do(t, "overview", chromedp.Navigate(srv.URL+"/console/overview"), chromedp.WaitVisible("#backends"))
		f.waitFor(t, "stderr and the dial error shown", `document.body.innerText.includes(`+jsString("STDERR-DATA"+markup)+`) && document.body.innerText.includes(`+jsString("DIAL-ERROR"+markup)+`) && !!document.body.dataset.updated`)
		clean(t, "overview", "STDERR", "STDERR-DATA", "DIAL-ERROR", "PRINCIPAL-ADMIN")
	})

	t.Run("tools: names, titles, descriptions, schemas, links", func(t *testing.T) {
		f.do(t, "tools", chromedp.Navigate(srv.URL+"/console/tools?q=evil"), chromedp.WaitVisible("#tools"))
		clean(t, "the tool list", "TOOL-APPROVE", "TOOL-DENIED", "DENIED-DESC")
		if n := f.eval(t, `document.querySelectorAll("#denied-tools tr[data-tool]").length`, false); n != float64(1) {
			t.Errorf("%v denied tools listed, want 1", n)
		}
		f.do(t, "the denied tool", chromedp.Navigate(srv.URL+"/console/tools?name="+url.QueryEscape("evil."+deniedName)), chromedp.WaitVisible("#policy"))
		clean(t, "the denied tool's page", "TOOL-DENIED")
		for _, name := range []string{approveName, failName, "echo"} {
			f.do(t, "open "+name, chromedp.Navigate(srv.URL+"/console/tools?q=evil"), chromedp.WaitVisible("#tools"))
			// Follow the list's own link (the javascript: name included).
			f.eval(t, `Array.from(document.querySelectorAll("#tools a")).find(a => a.textContent.startsWith(`+
				jsString("evil."+name[:min(8, len(name))])+`)).click()`, false)
			f.waitFor(t, "the tool's page", `!!document.querySelector("#declaration")`)
			clean(t, "tool "+name, "DESC", "PROPERTY", "PROP-DESC")
		}
		// What the URL reflects: the search and an unknown name.
		f.do(t, "reflected", chromedp.Navigate(srv.URL+"/console/tools?q="+url.QueryEscape(h.payload("QUERY"))+
			"&name="+url.QueryEscape(h.payload("NAME"))), chromedp.WaitVisible("#q"))
		clean(t, "tools with a hostile query", "NAME")
		if v := f.eval(t, `document.querySelector("#q").value`, false); v != h.payload("QUERY") {
			t.Errorf("the search box holds %q", v)
		}
	})

	chain := func(code, intent string) <-chan *mcp.CallToolResult {
		out := make(chan *mcp.CallToolResult, 1)
		go func() {
			res, err := session.CallTool(context.Background(), &mcp.CallToolParams{Name: "call_tool_chain",
				Arguments: map[string]any{"code": code, "intent": intent}})
			if err != nil {
				res = &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: err.Error()}}}
			}
			out <- res
		}()
		return out
	}
	returns := "// " + h.payload("SOURCE") + "\n" +
		"console.log(" + jsString(h.payload("CONSOLE")+sse) + ");\n" +
		"const approved = await evil[" + jsString(approveName) + "]({[" + jsString(prop) + "]: " + jsString(h.payload("ARGS")+sse) + "});\n" +
		"let failed = '';\ntry { await evil[" + jsString(failName) + "]({}); } catch (e) { failed = String(e.message); }\n" +
		"return {approved, failed, echoed: await evil.echo({}), note: " + jsString(h.payload("RESULT")) + "};"
	throws := "// " + h.payload("SOURCE-THROWS") + "\nawait evil.echo({});\nthrow new Error(" + jsString(h.payload("THROWN")+sse) + ");"

	t.Run("approvals and runs, live", func(t *testing.T) {
		f.do(t, "approvals", chromedp.Navigate(srv.URL+"/console/approvals"), chromedp.WaitVisible("#no-approvals"))
		done := chain(returns, h.payload("INTENT")+sse)
		f.waitFor(t, "the approval, live", `!!document.querySelector("section.approval")`)
		clean(t, "approvals", "PRINCIPAL-AGENT", "TOOL-APPROVE", "ARGS")
		f.do(t, "runs", chromedp.Navigate(srv.URL+"/console/runs"), chromedp.WaitVisible("#live-runs"))
		f.waitFor(t, "a live update", `!!document.body.dataset.updated && !!document.querySelector("#live-runs")`)
		clean(t, "a live run", "PRINCIPAL-AGENT", "INTENT")
		f.do(t, "the live run's page", chromedp.Click(`#live-runs tr[data-record] td a`), chromedp.WaitVisible("#code"))
		f.waitFor(t, "a live update", `!!document.body.dataset.updated && document.querySelector("#outcome").dataset.state === "running"`)
		clean(t, "a live run's page", "PRINCIPAL-AGENT", "SOURCE", "CONSOLE")
		f.do(t, "approve", chromedp.Navigate(srv.URL+"/console/approvals"), chromedp.WaitVisible("section.approval button.approve"),
			chromedp.Click("section.approval button.approve"))
		f.waitFor(t, "the approval answered", `!!document.querySelector("#no-approvals")`)
		select {
		case res := <-done:
			if res.IsError || !strings.Contains(resultText(res), "TOOL-RESULT") {
				t.Fatalf("the approved program ended with %q", resultText(res))
			}
		case <-time.After(time.Minute):
			t.Fatal("the program did not resume after the approval")
		}
		// A record arriving while the page is open comes over the stream.
		f.do(t, "runs", chromedp.Navigate(srv.URL+"/console/runs"), chromedp.WaitVisible("#records"))
		f.waitFor(t, "the first live update", `!!document.body.dataset.updated`)
		select {
		case res := <-chain(throws, ""):
			if !res.IsError {
				t.Fatalf("the throwing program ended with %q", resultText(res))
			}
		case <-time.After(time.Minute):
			t.Fatal("the throwing program did not end")
		}
		f.waitFor(t, "both records, live", `document.querySelectorAll("#records tr[data-record]").length === 2`)
		clean(t, "the runs list", "PRINCIPAL-AGENT")
		f.do(t, "runs filtered", chromedp.Navigate(srv.URL+"/console/runs?principal="+url.QueryEscape(h.payload("FILTER"))+
			"&text="+url.QueryEscape(h.payload("TEXT"))+"&outcome="+url.QueryEscape(h.payload("OUTCOME"))+"&page=1"), chromedp.WaitVisible("#records"))
		f.waitFor(t, "a live update", `!!document.body.dataset.updated`)
		clean(t, "runs with hostile filters")
		if v := f.eval(t, `document.querySelector("#run-filter input[name=text]").value`, false); v != h.payload("TEXT") {
			t.Errorf("the text filter holds %q", v)
		}
		f.do(t, "runs", chromedp.Navigate(srv.URL+"/console/runs"), chromedp.WaitVisible("#records"))
	})

	t.Run("run records and their replays", func(t *testing.T) {
		ids := f.eval(t, `Array.from(document.querySelectorAll("#records tr[data-record]"), tr => tr.dataset.record)`, false).([]any)
		if len(ids) != 2 {
			t.Fatalf("%d run records listed, want 2", len(ids))
		}
		for i, want := range [][]string{{"SOURCE-THROWS", "THROWN", "TOOL-RESULT"}, {"SOURCE", "CONSOLE", "ARGS", "TOOL-RESULT", "TOOL-ERROR", "RESULT"}} {
			id := ids[i].(string)
			f.do(t, "record", chromedp.Navigate(srv.URL+"/console/record?id="+url.QueryEscape(id)), chromedp.WaitVisible("#timeline"))
			clean(t, "record "+id, append(want, "PRINCIPAL-AGENT")...)
			f.do(t, "replay", chromedp.Click("#replay"), chromedp.WaitVisible("#replay-verdict"))
			if got := f.text(t, "#replay-verdict"); got != "reproduced" {
				t.Errorf("replay of %s: %q (%s)", id, got, f.text(t, "#replay-outcome"))
			}
			if i == 1 {
				want = append(want, "RESULT", "TOOL-RESULT", "TOOL-ERROR")
			}
			clean(t, "replayed record "+id, append(want, "PRINCIPAL-ADMIN")...)
		}
	})

	t.Run("audit, and what its filters reflect", func(t *testing.T) {
		f.do(t, "audit", chromedp.Navigate(srv.URL+"/console/audit"), chromedp.WaitVisible("#audit"))
		f.waitFor(t, "a live update", `!!document.body.dataset.updated`)
		clean(t, "audit", "PRINCIPAL-AGENT", "TOOL-APPROVE")
		f.do(t, "audit filtered", chromedp.Navigate(srv.URL+"/console/audit?principal="+url.QueryEscape(h.payload("FILTER"))+
			"&text="+url.QueryEscape(h.payload("TEXT"))+"&kind="+url.QueryEscape(h.payload("KIND"))), chromedp.WaitVisible("#audit"))
		f.waitFor(t, "a live update", `!!document.body.dataset.updated`)
		clean(t, "audit with hostile filters")
		if v := f.eval(t, `document.querySelector("input[name=principal]").value`, false); v != h.payload("FILTER") {
			t.Errorf("the principal filter holds %q", v)
		}
	})

	t.Run("metrics", func(t *testing.T) {
		f.do(t, "metrics", chromedp.Navigate(srv.URL+"/console/metrics"))
		f.waitFor(t, "a sample", `Number(document.body.dataset.samples || 0) >= 1`)
		clean(t, "metrics", "PRINCIPAL-ADMIN")
		f.do(t, "an unknown record", chromedp.Navigate(srv.URL+"/console/record?id="+url.QueryEscape(h.payload("ID"))))
		clean(t, "an unknown record", "ID")
	})

	t.Run("the event stream carries no forged line", func(t *testing.T) {
		for _, p := range []string{"overview", "runs", "approvals", "audit"} {
			req, _ := http.NewRequest("GET", srv.URL+"/console/events?page="+p, nil)
			req.Header.Set("Authorization", "Bearer "+adminTok)
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			res, err := http.DefaultClient.Do(req.WithContext(ctx))
			if err != nil {
				cancel()
				t.Fatal(err)
			}
			r := bufio.NewReader(res.Body)
			var event []string
			for {
				line, err := r.ReadString('\n')
				if err != nil {
					t.Fatalf("%s: reading the stream: %v", p, err)
				}
				if line == "\n" {
					break
				}
				event = append(event, line)
			}
			cancel()
			res.Body.Close()
			for i, l := range event {
				if strings.ContainsRune(l, '\r') || !(i == 0 && l == "event: live\n" || i > 0 && strings.HasPrefix(l, "data: ")) {
					t.Errorf("%s: line %d of the first event is %q", p, i, l)
					break
				}
			}
		}
	})
}

// TestGatewaysGetADataDirOfTheirOwn: the default store.data_dir of the
// gateways this package starts is in a temporary directory of the tests
// (TestMain), not the developer's ~/.local/share/isogate, whose saved
// programs they would list.
func TestGatewaysGetADataDirOfTheirOwn(t *testing.T) {
	if dir := config.Default().Store.DataDir; !strings.HasPrefix(dir, filepath.Clean(os.TempDir())+string(filepath.Separator)) {
		t.Fatalf("the gateways' default store.data_dir is %s, not one of the tests'", dir)
	}
}
