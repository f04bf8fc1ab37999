package console

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/isogate/isogate/config"
	"github.com/isogate/isogate/internal/backend"
	"github.com/isogate/isogate/internal/catalog"
	"github.com/isogate/isogate/internal/desk"
	"github.com/isogate/isogate/internal/pipeline"
	"github.com/isogate/isogate/internal/surface"
	"github.com/isogate/isogate/v8sandbox/procpool"
)

func get(t *testing.T, c *Console, target string) string {
	t.Helper()
	res := do(t, c, "GET", target, nil, http.Header{"Authorization": {"Bearer admin-token"}})
	body, _ := io.ReadAll(res.Body)
	if res.StatusCode != 200 {
		t.Fatalf("GET %s: %d %s", target, res.StatusCode, body)
	}
	return string(body)
}

func wantIn(t *testing.T, page, what string, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(page, w) {
			t.Errorf("%s lacks %q", what, w)
		}
	}
}

// Issue 43 (7): a run's page showed no arguments, results, console lines
// or final result, an empty outcome for a call whose tool answered
// isError, an approval's wait as an unexplained gap, and the run's code
// twice. Now it shows each call's arguments and result (cut to
// shownBytes), the tool's error, the wait and who answered, the console
// lines, the error with its code once, and a stored output's URI.
func TestRunPageShowsTheWholeRun(t *testing.T) {
	c, d := testConsole(fakeVerify)
	huge := `{"text":"` + strings.Repeat("z", 3*shownBytes) + `"}`
	d.KeepRecord("bob", &pipeline.RunRecord{ID: "run-1", Code: "const r = await fs.read({path: '/etc/motd'})", Tier: "v8",
		Started: time.Now(), Outcome: pipeline.OutcomeError, Console: []string{"LOG-LINE-1 <b>"},
		Error: &pipeline.RunError{Code: "TOOL_ERROR", Message: "TOOL_ERROR: fs.read failed: ENOENT"},
		Calls: []pipeline.CallRecord{
			{Seq: 1, Backend: "fs", Tool: "read", Args: pipeline.NewBlob([]byte(`{"path":"/etc/motd"}`)), StartedMS: 82936, DurationMS: 3,
				Error: "ENOENT: no such file", Result: pipeline.NewBlob([]byte(`{"content":[{"type":"text","text":"ENOENT: no such file"}],"isError":true}`)),
				Approval: &pipeline.ApprovalAnswer{WaitedMS: 82900, Approved: true, ApprovalBy: pipeline.ApprovalBy{Name: "alice", Via: pipeline.ViaConsole}}},
			{Seq: 2, Backend: "fs", Tool: "write", Args: pipeline.NewBlob([]byte(huge)), OK: true,
				Result: pipeline.NewBlob([]byte(`{"content":[{"type":"text","text":"RESULT-TEXT"}]}`))},
			{Seq: 3, Backend: "fs", Tool: "drop", Args: pipeline.NewBlob([]byte(`{}`)), Code: "APPROVAL_DENIED",
				Error:    "APPROVAL_DENIED: fs.drop was not approved: the person declined",
				Approval: &pipeline.ApprovalAnswer{WaitedMS: 400, ApprovalBy: pipeline.ApprovalBy{Name: "bob", Via: pipeline.ViaClient}}},
		}})
	d.KeepRecord("bob", &pipeline.RunRecord{ID: "run-2", Code: "return big", Started: time.Now(), Outcome: pipeline.OutcomeOK,
		Result: pipeline.NewBlob([]byte(`{"answer":42}`)), ResultBytes: 13, ResultURI: "isogate://result/abc123"})

	page := get(t, c, "/console/record?id=run-1")
	wantIn(t, page, "the failed run's page",
		`&#34;path&#34;: &#34;/etc/motd&#34;`, // the arguments, indented JSON, escaped
		`ENOENT: no such file`, "RESULT-TEXT",
		"waited 83 s for approval, approved by alice on the console",
		"waited 400 ms for approval, declined by bob&#39;s client",
		`<span class="code">APPROVAL_DENIED</span> fs.drop was not approved: the person declined`,
		"LOG-LINE-1 &lt;b&gt;",
		`<span class="code" id="outcome-code">TOOL_ERROR</span>`,
		`<pre id="run-error" class="error-text">fs.read failed: ENOENT</pre>`,
		fmt.Sprintf("the first %d KiB of %d bytes shown", shownBytes>>10, len(huge)))
	if strings.Contains(page, "TOOL_ERROR: fs.read") || strings.Contains(page, "APPROVAL_DENIED APPROVAL_DENIED") || strings.Contains(page, "APPROVAL_DENIED: fs.drop") {
		t.Error("the page repeats a code before its message")
	}
	if strings.Contains(page, strings.Repeat("z", shownBytes+1)) {
		t.Error("a large argument is shown past shownBytes")
	}
	page = get(t, c, "/console/record?id=run-2")
	wantIn(t, page, "the successful run's page", `&#34;answer&#34;: 42`, `<code id="result-uri">isogate://result/abc123</code>`)
}

// A live run links to its page, which shows its calls so far, and says
// when it waits for approval; the runs list filters, pages and sorts by
// start.
func TestRunsListLinksFiltersAndPages(t *testing.T) {
	c, d := testConsole(fakeVerify)
	run, off := d.StartRun("carol", "sync", "await fs.write({})", func(error) {})
	defer off()
	p := pipeline.NewRun(0)
	run.Attach(p)
	blocked := make(chan struct{})
	defer close(blocked)
	asked := make(chan struct{})
	go func() {
		caller := pipeline.New(pipeline.Options{Backend: pipeline.CallerFunc(func(_ context.Context, _ *pipeline.Call) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{}, nil
		}), Policy: pipeline.NewPolicy(map[string]config.Backend{"fs": {Tools: config.ToolPolicy{Approve: []string{"write"}}}})})
		ctx := pipeline.WithRun(pipeline.WithApprover(context.Background(), d.Approver(nil, "carol", run.ID)), p)
		close(asked)
		_, _ = caller.Call(ctx, &pipeline.Call{Backend: "fs", Tool: "write", Args: []byte(`{}`)})
	}()
	<-asked
	for {
		changed := d.Changed()
		if len(d.Approvals()) == 1 {
			break
		}
		<-changed
	}
	page := get(t, c, "/console/runs")
	wantIn(t, page, "the runs page", `<a href="/console/record?id=`+p.ID+`">`, `waiting for approval`)
	live := get(t, c, "/console/record?id="+p.ID)
	wantIn(t, live, "the live run's page", `data-state="running"`, `waiting for approval (1)`, "await fs.write({})", `value="`+run.ID+`"`)
	d.Answer(d.Approvals()[0].ID, false, "alice")

	base := time.Now().Add(-time.Hour)
	for i := 119; i >= 0; i-- { // kept newest start first: the list turns them round
		rec := &pipeline.RunRecord{ID: fmt.Sprintf("r%03d", i), Started: base.Add(time.Duration(i) * time.Second), Outcome: pipeline.OutcomeOK, Code: "return 1"}
		who := "bob"
		if i%10 == 0 {
			rec.Outcome, rec.Error, who = pipeline.OutcomeError, &pipeline.RunError{Code: "TIMEOUT", Message: "TIMEOUT: slow"}, "dave"
		}
		d.KeepRecord(who, rec)
	}
	page = get(t, c, "/console/runs")
	wantIn(t, page, "the first page", `120 runs, newest start first · page 1 of 3`, `href="/console/runs?page=2"`)
	if i, j := strings.Index(page, `data-record="r119"`), strings.Index(page, `data-record="r118"`); i < 0 || j < 0 || i > j {
		t.Error("the runs are not listed newest start first")
	}
	page = get(t, c, "/console/runs?page=3")
	wantIn(t, page, "the last page", `data-record="r000"`, `href="/console/runs?page=2"`)
	page = get(t, c, "/console/runs?outcome=TIMEOUT&principal=dave")
	wantIn(t, page, "the filtered list", `12 runs`, `data-record="r110"`)
	if strings.Contains(page, `data-record="r111"`) {
		t.Error("the filter let an ok run of bob through")
	}
}

// The overview shows confinement as a table and marks backend stderr
// lines notice or error, saying why a roots/list refusal is harmless; the
// Tools page lists denied tools with the rule that denies them.
func TestOverviewAndDeniedTools(t *testing.T) {
	d := desk.New()
	policy := pipeline.NewPolicy(map[string]config.Backend{"memory": {Tools: config.ToolPolicy{Deny: []string{"delete_*"}}}})
	// The catalogue keeps what the policy denies, with its rule and
	// pattern, as the app puts it there.
	cat := catalog.New()
	var denied []catalog.DeniedTool
	for _, t := range []*mcp.Tool{{Name: "read_graph"}, {Name: "delete_entities", Description: "Deletes entities."}} {
		if rule, pattern := policy.DeniedBy("memory", t.Name); rule != "" {
			denied = append(denied, catalog.DeniedTool{Tool: t.Name, Rule: rule, Pattern: pattern, Description: t.Description})
		}
	}
	cat.SetBackendSpec("memory", catalog.BackendSpec{Denied: denied}, []*mcp.Tool{{Name: "read_graph", InputSchema: map[string]any{"type": "object"}}})
	c := New(Sources{Desk: d, Policy: policy, Catalog: cat,
		Sandbox: func() surface.SandboxReport {
			return surface.SandboxReport{Isolation: "process", Confinement: &procpool.Confinement{Mode: "strict",
				Layers: []procpool.Layer{{Name: "landlock", Level: "on"}, {Name: "seccomp", Level: "partial", Detail: "no TSYNC"}}}}
		},
		Backends: func() []backend.Status {
			return []backend.Status{{Name: "fs", State: backend.StateHealthy, Stderr: []string{
				"Secure MCP Filesystem Server running on stdio",
				"Failed to request roots from client undefined: MCP error -32603: roots/list refused",
				"Error: EACCES: permission denied, open '/root/x'"}}}
		},
	}, Options{Admins: []string{"scope:isogate.admin"}, Verify: fakeVerify, Version: "test"})
	defer c.Close()
	page := get(t, c, "/console/overview")
	wantIn(t, page, "the overview", `<table id="confinement">`, `<tr data-layer="seccomp"><td>seccomp</td><td class="state warn">partial</td><td>no TSYNC</td></tr>`,
		`<li class="notice"><span class="level">notice</span> <span class="line">Secure MCP`,
		`<li class="notice"><span class="level">notice</span> <span class="line">Failed to request roots`, `<span class="harmless">harmless:`,
		`<li class="error"><span class="level">error</span> <span class="line">Error: EACCES`)
	if strings.Contains(page, `{&#34;mode&#34;`) || strings.Contains(page, `"layers"`) {
		t.Error("the confinement is still shown as JSON")
	}
	page = get(t, c, "/console/tools?q=delete")
	wantIn(t, page, "the tools page", `<tr data-tool="memory.delete_entities"><td>memory.delete_entities</td><td class="rule">backends.memory.tools.deny: delete_*</td>`, "and 1 denied")
	if strings.Contains(page, "memory.read_graph") {
		t.Error("an allowed tool is listed as denied")
	}
	page = get(t, c, "/console/tools?name=memory.delete_entities")
	wantIn(t, page, "the denied tool's page", `<span id="policy">denied by backends.memory.tools.deny: delete_*</span>`)
}

func TestHTMLUnescaped(t *testing.T) {
	for in, want := range map[string]string{
		`"\u003cb\u003e \u0026"`: `"<b> &"`,
		`"\\u003cb"`:             `"\\u003cb"`,
		`"\\\u003c"`:             `"\\<"`,
		`"\n\u00e9"`:             `"\n\u00e9"`,
		`"end\`:                  `"end\`,
	} {
		if got := htmlUnescaped(in); got != want {
			t.Errorf("htmlUnescaped(%s) = %s, want %s", in, got, want)
		}
	}
}
