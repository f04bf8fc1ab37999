package gateway

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/isogate/isogate/config"
	"github.com/isogate/isogate/internal/app"
	"github.com/isogate/isogate/internal/backend"
	"github.com/isogate/isogate/internal/testutil"
)

// Every error code docs/tools.md documents ("Refused and failed tool calls"
// and "Run errors") is produced through a real path: a gateway served over
// loopback HTTP with static-token principals, real go-sdk clients, and
// in-process go-sdk backends for fault injection. Each scenario checks the
// code in the result's _meta["isogate/code"] and the audit line's outcome.
// A code whose only producers need several replicas, a killed process or
// the type checker names the existing test that produces it instead.

// documentedCodes parses the code tables of docs/tools.md's sections
// "Refused and failed tool calls" and "Run errors".
func documentedCodes(t *testing.T) []string {
	t.Helper()
	f, err := os.Open("../docs/tools.md")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	row := regexp.MustCompile("^\\| `([A-Z][A-Z_]+)` \\|")
	var codes []string
	seen := map[string]bool{}
	in := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "#") {
			in = line == "### Refused and failed tool calls" || line == "### Run errors"
			continue
		}
		if m := row.FindStringSubmatch(line); in && m != nil && !seen[m[1]] {
			seen[m[1]] = true
			codes = append(codes, m[1])
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(codes) < 30 {
		t.Fatalf("parsed %d codes from docs/tools.md's tables, want the whole vocabulary: %v", len(codes), codes)
	}
	return codes
}

// codesHarness is the gateway of TestEveryDocumentedCode.
type codesHarness struct {
	g       *Gateway
	url     string
	logs    *testutil.Buffer
	started chan string // the tool of each blocking call that reached its backend
}

func newCodesHarness(t *testing.T) *codesHarness {
	t.Helper()
	h := &codesHarness{logs: &testutil.Buffer{}, started: make(chan string, 16)}
	cfg := config.Default()
	cfg.Server.CacheDir = t.TempDir()
	cfg.Server.ToolNames = config.ToolNamesPrefixed
	cfg.Server.Auth.Mode = config.AuthToken
	cfg.Server.Auth.Tokens = redteamTokens
	cfg.Server.Auth.Rules = map[string]config.AccessRule{"no-secrets-for-bob": {Principals: []string{"bob"}, Deny: []string{"faults.secret"}}}
	cfg.Sandbox.Isolation, cfg.Sandbox.TrustedCode = config.IsolationThread, true
	cfg.Sandbox.Timeout = time.Minute
	cfg.Sandbox.MaxToolCalls = 3
	cfg.Sandbox.MaxHeapMB = 16
	cfg.Sandbox.MaxConcurrentPerPrincipal = 1
	cfg.Sandbox.BackendWait = 200 * time.Millisecond
	cfg.Sandbox.Output.ResultStoreBytes = 4 << 20 // one principal keeps 1 MiB
	cfg.Backends = map[string]config.Backend{
		// A command that does not exist: down.
		"ghost": {Name: "ghost", Transport: config.TransportStdio, Command: "/nonexistent/isogate-no-such-command",
			Timeout: 10 * time.Second, MaxConcurrentCalls: 8},
		// A process that never answers initialize: starting.
		"sleeper": {Name: "sleeper", Transport: config.TransportStdio, Command: "sleep", Args: []string{"3600"},
			Timeout: 10 * time.Second, MaxConcurrentCalls: 8},
	}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}

	block := func(name string) mcp.ToolHandlerFor[map[string]any, any] {
		return func(ctx context.Context, _ *mcp.CallToolRequest, _ map[string]any) (*mcp.CallToolResult, any, error) {
			h.started <- name
			<-ctx.Done()
			return nil, nil, ctx.Err()
		}
	}
	ok := func(context.Context, *mcp.CallToolRequest, map[string]any) (*mcp.CallToolResult, any, error) {
		return textResult("ok", false), nil, nil
	}
	faults := mcp.NewServer(&mcp.Implementation{Name: "faults"}, nil)
	for _, name := range []string{"echo", "secret", "denied", "gated"} {
		mcp.AddTool(faults, &mcp.Tool{Name: name, Description: "Answers ok."}, ok)
	}
	mcp.AddTool(faults, &mcp.Tool{Name: "add", Description: "Adds a and b."},
		func(_ context.Context, _ *mcp.CallToolRequest, in struct {
			A float64 `json:"a"`
			B float64 `json:"b"`
		}) (*mcp.CallToolResult, any, error) {
			return textResult(fmt.Sprint(in.A+in.B), false), nil, nil
		})
	mcp.AddTool(faults, &mcp.Tool{Name: "refuse", Description: "Answers with a tool error."},
		func(context.Context, *mcp.CallToolRequest, map[string]any) (*mcp.CallToolResult, any, error) {
			return textResult("no way", true), nil, nil
		})
	mcp.AddTool(faults, &mcp.Tool{Name: "block", Description: "Waits until cancelled."}, block("faults.block"))
	mcp.AddTool(faults, &mcp.Tool{Name: "wait", Description: "Waits until cancelled."}, block("faults.wait"))
	faultsSpec := backend.InMemory("faults", faults)
	faultsSpec.Timeout = time.Minute
	faultsSpec.Tools = config.ToolPolicy{Deny: []string{"denied"}, Approve: []string{"gated"}}

	slow := mcp.NewServer(&mcp.Implementation{Name: "slowb"}, nil)
	mcp.AddTool(slow, &mcp.Tool{Name: "hang", Description: "Waits until cancelled."}, block("slowb.hang"))
	slowSpec := backend.InMemory("slowb", slow)
	slowSpec.Timeout = 300 * time.Millisecond // its own per-call timeout

	fragile := mcp.NewServer(&mcp.Implementation{Name: "fragile"}, nil)
	mcp.AddTool(fragile, &mcp.Tool{Name: "drop", Description: "Closes its connection mid-call."},
		func(ctx context.Context, req *mcp.CallToolRequest, _ map[string]any) (*mcp.CallToolResult, any, error) {
			go req.Session.Close()
			<-ctx.Done()
			return nil, nil, ctx.Err()
		})
	fragileSpec := backend.InMemory("fragile", fragile)
	fragileSpec.Timeout = time.Minute

	per := mcp.NewServer(&mcp.Implementation{Name: "per"}, nil)
	mcp.AddTool(per, &mcp.Tool{Name: "block", Description: "Waits until cancelled."}, block("per.block"))
	mcp.AddTool(per, &mcp.Tool{Name: "noop", Description: "Answers ok."}, ok)
	perSpec := backend.InMemory("per", per)
	perSpec.Sessions, perSpec.MaxSessions = config.SessionsPerClient, 1
	perSpec.Timeout = time.Minute

	logger := slog.New(slog.NewJSONHandler(h.logs, &slog.HandlerOptions{Level: slog.LevelInfo}))
	h.g = startGateway(t, cfg, app.Options{Runner: testPool(), Logger: logger,
		ExtraSpecs: []backend.Spec{faultsSpec, slowSpec, fragileSpec, perSpec}})
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	if err := h.g.app.Backends.WaitHealthy(ctx, "faults", "slowb", "fragile", "per"); err != nil {
		t.Fatal(err)
	}
	ln, err := h.g.Listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	sctx, stop := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = h.g.ServeHTTP(sctx, ln); close(done) }()
	t.Cleanup(func() { stop(); <-done })
	h.url = "http://" + ln.Addr().String() + "/mcp?expose=both"
	return h
}

// client opens a session of principal who (alice or bob) exposing the
// meta-tools and the passthrough tools; decline makes it a client that
// supports elicitation and declines every request.
func (h *codesHarness) client(t *testing.T, who string, decline bool) *mcp.ClientSession {
	t.Helper()
	var opts *mcp.ClientOptions
	if decline {
		opts = &mcp.ClientOptions{ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: "decline"}, nil
		}}
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: who}, opts).Connect(t.Context(), &mcp.StreamableClientTransport{
		Endpoint: h.url, HTTPClient: &http.Client{Transport: bearer{redteamTokens[who].Token}}}, nil)
	if err != nil {
		t.Fatalf("%s connects: %v", who, err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// wantCode checks res is a tool error with code in _meta["isogate/code"].
func wantCode(t *testing.T, what string, res *mcp.CallToolResult, err error, code string) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v, want a result with code %s", what, err, code)
	}
	text := ""
	if len(res.Content) > 0 {
		if tc, ok := res.Content[0].(*mcp.TextContent); ok {
			text = tc.Text
		}
	}
	if !res.IsError || res.Meta["isogate/code"] != code {
		t.Fatalf("%s: isError %v, _meta[isogate/code] %v, want %s:\n%s", what, res.IsError, res.Meta["isogate/code"], code, text)
	}
}

// audits counts the audit lines with every field of want.
func (h *codesHarness) audits(want map[string]any) int {
	n := 0
	for line := range strings.SplitSeq(h.logs.String(), "\n") {
		var m map[string]any
		if json.Unmarshal([]byte(line), &m) != nil || m["msg"] != "audit" {
			continue
		}
		all := true
		for k, v := range want {
			if fmt.Sprint(m[k]) != fmt.Sprint(v) {
				all = false
			}
		}
		if all {
			n++
		}
	}
	return n
}

// audited waits (a failure bound, not a synchronisation) for more than
// already audit lines with every field of want.
func (h *codesHarness) audited(t *testing.T, want map[string]any, already ...int) {
	t.Helper()
	n := 0
	if len(already) > 0 {
		n = already[0]
	}
	testutil.Eventually(t, 10*time.Second, func() bool { return h.audits(want) > n },
		"no new audit line with %v in:\n%s", want, h.logs)
}

// chain runs program as who's call_tool_chain and checks its code in the
// result and in the program_run audit line.
func (h *codesHarness) chain(t *testing.T, cs *mcp.ClientSession, who, program, code string, extra ...any) {
	t.Helper()
	args := map[string]any{"code": program}
	for i := 0; i+1 < len(extra); i += 2 {
		args[extra[i].(string)] = extra[i+1]
	}
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "call_tool_chain", Arguments: args})
	wantCode(t, program, res, err, code)
	want := map[string]any{"event": "program_run", "principal": who, "outcome": code}
	if id, _ := res.Meta["isogate/run"].(string); id != "" {
		want["run"] = id
	}
	h.audited(t, want)
}

// pass makes who's passthrough call of tool (backend__tool) and checks its
// code in the result and in the tool_call audit line.
func (h *codesHarness) pass(t *testing.T, cs *mcp.ClientSession, who, tool, code string) {
	t.Helper()
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: tool, Arguments: map[string]any{}})
	wantCode(t, tool, res, err, code)
	h.audited(t, map[string]any{"event": "tool_call", "principal": who,
		"tool": strings.Replace(tool, "__", ".", 1), "outcome": code})
}

// codeCase produces one documented code: run does it through the harness,
// or by names the existing test (path:TestName, from the repository's
// root) that produces it where it needs several replicas, a killed
// process or the type checker.
type codeCase struct {
	run func(t *testing.T, h *codesHarness)
	by  string
	// gap says why no test produces the code yet (logged, so that it is
	// a decision on record, not an omission).
	gap string
}

// TestEveryDocumentedCode walks every code of docs/tools.md's tables
// through a real path (issue 43, 3).
func TestEveryDocumentedCode(t *testing.T) {
	cases := map[string]codeCase{
		"TOOL_DENIED": {run: func(t *testing.T, h *codesHarness) {
			bob := h.client(t, "bob", false)
			h.chain(t, bob, "bob", `return await faults.secret({})`, "TOOL_DENIED") // server.auth.rules
			h.pass(t, bob, "bob", "faults__secret", "TOOL_DENIED")
			h.chain(t, h.client(t, "alice", false), "alice", `return await faults["denied"]({})`, "TOOL_DENIED") // tools.deny
		}},
		"TOOL_BUDGET": {run: func(t *testing.T, h *codesHarness) {
			h.chain(t, h.client(t, "alice", false), "alice", `for (let i = 0; i < 4; i++) await faults.echo({i}); return 1`, "TOOL_BUDGET")
		}},
		"APPROVAL_DENIED": {run: func(t *testing.T, h *codesHarness) {
			alice := h.client(t, "alice", true)
			h.chain(t, alice, "alice", `return await faults.gated({})`, "APPROVAL_DENIED")
			h.pass(t, alice, "alice", "faults__gated", "APPROVAL_DENIED")
		}},
		"APPROVAL_REQUIRED": {run: func(t *testing.T, h *codesHarness) {
			alice := h.client(t, "alice", false)
			h.chain(t, alice, "alice", `return await faults.gated({})`, "APPROVAL_REQUIRED")
			h.pass(t, alice, "alice", "faults__gated", "APPROVAL_REQUIRED")
		}},
		"INVALID_ARGUMENTS": {run: func(t *testing.T, h *codesHarness) {
			h.chain(t, h.client(t, "alice", false), "alice", `return await faults.add({x: 1, y: 2})`, "INVALID_ARGUMENTS")
		}},
		// A program only names configured backends (another name is a
		// ReferenceError); the manager's answer for a name it does not
		// know is checked where it is made.
		"UNKNOWN_BACKEND": {by: "internal/pipeline/errors_test.go:TestOneCodeOf"},
		"BACKEND_STARTING": {run: func(t *testing.T, h *codesHarness) {
			alice := h.client(t, "alice", false)
			h.chain(t, alice, "alice", `return await sleeper.anything({})`, "BACKEND_STARTING")
			// Direct JSON (tier 1) too: it was EVAL_ERROR (tryout).
			h.chain(t, alice, "alice", `{"tool": "sleeper.anything", "arguments": {}}`, "BACKEND_STARTING")
		}},
		"BACKEND_UNAVAILABLE": {run: func(t *testing.T, h *codesHarness) {
			alice := h.client(t, "alice", false)
			h.chain(t, alice, "alice", `return await ghost.anything({})`, "BACKEND_UNAVAILABLE")
			h.chain(t, alice, "alice", `{"tool": "ghost.anything", "arguments": {}}`, "BACKEND_UNAVAILABLE")
		}},
		"BACKEND_TIMEOUT": {run: func(t *testing.T, h *codesHarness) {
			alice := h.client(t, "alice", false)
			h.chain(t, alice, "alice", `return await slowb.hang({})`, "BACKEND_TIMEOUT")
			<-h.started
			h.pass(t, alice, "alice", "slowb__hang", "BACKEND_TIMEOUT")
			<-h.started
		}},
		"BACKEND_CONNECTION_LOST": {run: func(t *testing.T, h *codesHarness) {
			h.chain(t, h.client(t, "alice", false), "alice", `return await fragile.drop({})`, "BACKEND_CONNECTION_LOST")
		}},
		"BACKEND_BUSY": {run: func(t *testing.T, h *codesHarness) {
			// alice's call holds the backend's only client session.
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			alice := h.client(t, "alice", false)
			held := make(chan struct{})
			go func() {
				_, _ = alice.CallTool(ctx, &mcp.CallToolParams{Name: "per__block", Arguments: map[string]any{}})
				close(held)
			}()
			if got := <-h.started; got != "per.block" {
				t.Fatalf("%s started, want per.block", got)
			}
			h.pass(t, h.client(t, "bob", false), "bob", "per__noop", "BACKEND_BUSY")
			cancel()
			<-held
		}},
		"PRINCIPAL_BUSY": {run: func(t *testing.T, h *codesHarness) {
			// alice's run holds her V8 slot, a second waits: the third is
			// refused at once.
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			alice := h.client(t, "alice", false)
			first := chainAsync(ctx, alice, `await faults.block({}); return 1`)
			if got := <-h.started; got != "faults.block" {
				t.Fatalf("%s started, want faults.block", got)
			}
			second := chainAsync(ctx, alice, `return 2`)
			wait, stop := context.WithTimeout(t.Context(), 30*time.Second)
			defer stop()
			hg := &httpGateway{url: strings.TrimSuffix(h.url, "?expose=both")}
			hg.awaitMetric(t, wait, `isogate_principal_share_hits_total{backend="",outcome="waited",pool="sandbox"} 1`, nil, "alice's second run")
			h.chain(t, alice, "alice", `return 3`, "PRINCIPAL_BUSY")
			cancel()
			<-first
			<-second
		}},
		"TOOL_ERROR": {run: func(t *testing.T, h *codesHarness) {
			alice := h.client(t, "alice", false)
			h.chain(t, alice, "alice", `return await faults.refuse({})`, "TOOL_ERROR")
		}},
		"EVAL_ERROR": {run: func(t *testing.T, h *codesHarness) {
			alice := h.client(t, "alice", false)
			h.chain(t, alice, "alice", `throw new Error("mine")`, "EVAL_ERROR")
			// A code the program sets itself is not the host's.
			h.chain(t, alice, "alice", `const e = new Error("TOOL_DENIED: mine"); e.code = "TOOL_DENIED"; throw e`, "EVAL_ERROR")
		}},
		"TIMEOUT": {run: func(t *testing.T, h *codesHarness) {
			h.chain(t, h.client(t, "alice", false), "alice", `for (;;) {}`, "TIMEOUT", "timeout", 300)
		}},
		"HEAP_LIMIT": {run: func(t *testing.T, h *codesHarness) {
			h.chain(t, h.client(t, "alice", false), "alice", `const a = []; for (;;) a.push([1, 2, 3])`, "HEAP_LIMIT")
		}},
		"OUTPUT_LIMIT": {run: func(t *testing.T, h *codesHarness) {
			h.chain(t, h.client(t, "alice", false), "alice", `return "x".repeat(2000000)`, "OUTPUT_LIMIT")
		}},
		"CANCELLED": {run: func(t *testing.T, h *codesHarness) {
			// The client gives up on its request: no result reaches it, the
			// audit line says so.
			// Only this run calls faults.wait.
			cancelled := map[string]any{"event": "program_run", "principal": "alice", "outcome": "CANCELLED", "tools": "[faults.wait]"}
			ctx, cancel := context.WithCancel(t.Context())
			alice := h.client(t, "alice", false)
			out := chainAsync(ctx, alice, `await faults.wait({}); return 1`)
			if got := <-h.started; got != "faults.wait" {
				t.Fatalf("%s started, want faults.wait", got)
			}
			cancel()
			<-out
			h.audited(t, cancelled)
		}},
		"CANCELLED_BY_OPERATOR": {by: "gateway/crossprincipal_test.go:TestConsoleRefusesAnotherPrincipal"},
		"PLAN_DENIED":           {by: "gateway/plan_test.go:TestPlanDeniedToolRefusedBeforeFirstCall"},
		"TYPECHECK_FAILED":      {by: "gateway/typecheck_test.go:TestTypecheckStrictRefusesBeforeAnyCall"},
		"TYPECHECK_UNAVAILABLE": {by: "gateway/typecheck_strict_test.go:TestTypecheckStrictRightAfterStart"},
		"TYPECHECK_TIMEOUT":     {by: "gateway/typecheck_ops_test.go:TestTypecheckTimeoutCounted"},
		"TYPECHECK_TOO_COMPLEX": {by: "gateway/typecheck_strict_test.go:TestTypecheckMemoryBombs"},
		"SANDBOX_CRASHED":       {by: "v8sandbox/procpool/pool_test.go:TestWorkerKilledMidRun"},
		"INTERNAL":              {by: "v8sandbox/host_test.go:TestReplyAndDispatch"},
		"REPLAY_DIVERGED":       {by: "gateway/durable_test.go:TestDurableRunResumesOnAnotherReplica"},
		"CALL_INDETERMINATE":    {by: "cmd/isogate/takeover_test.go:TestTaskSurvivesItsReplica"},
		"REPLICA_LOST":          {by: "cmd/isogate/takeover_test.go:TestTaskSurvivesItsReplica"},
		"JOURNAL_TAMPERED":      {by: "gateway/journal_tamper_test.go:TestJournalTamperedInRedis"},
		"LEASE_LOST":            {by: "cmd/isogate/fencing_test.go:TestFrozenReplicaIsFenced"},
		"STORE_FULL":            {by: "internal/resultstore/full_test.go:TestMemoryFullIsTyped"},
		"TASK_EXPIRED":          {by: "gateway/tasklife_test.go:TestEveryTaskEnds"},
		"JOURNAL_UNAVAILABLE":   {by: "gateway/tasklife_test.go:TestJournalUnavailableStopsTheRun"},
		"PROGRAM_NOT_FOUND":     {by: "gateway/programs_test.go:TestSavedProgramsAsTools"},
		"PROGRAM_FORBIDDEN":     {by: "gateway/programs_test.go:TestSavedProgramsAsTools"},
		"PROGRAM_STALE":         {by: "gateway/programs_drift_test.go:TestSavedProgramGoesStaleWhenItsBackendChanges"},
		"PROGRAM_DEPTH":         {by: "gateway/programcalls_test.go:TestSavedProgramsCallSavedPrograms"},
		"PROGRAM_INVALID":       {by: "internal/programs/programs_test.go:TestSaveRefusals"},
		"STORE_UNAVAILABLE":     {by: "internal/programs/programs_test.go:TestStoreDownFailsClosed"},
		"SKILLS_UNAVAILABLE":    {by: "internal/skills/skills_test.go:TestOwnSkillsPerPrincipal"},
		"STATE_QUOTA_EXCEEDED":  {by: "gateway/state_test.go:TestStateQuotaRefused"},
		"STATE_INVALID":         {by: "internal/codemode/state_test.go:TestStateInPrograms"},
		// Last: it closes the gateway's backend manager.
		"BACKEND_CLOSED": {run: func(t *testing.T, h *codesHarness) {
			alice := h.client(t, "alice", false)
			_ = h.g.app.Backends.Close(t.Context())
			h.chain(t, alice, "alice", `return await faults.echo({})`, "BACKEND_CLOSED")
		}},
	}

	codes := documentedCodes(t)
	for _, code := range codes {
		if _, ok := cases[code]; !ok {
			t.Errorf("code %s is documented but no scenario produces it", code)
		}
	}
	documented := strings.Join(codes, " ")
	for code := range cases {
		if !strings.Contains(" "+documented+" ", " "+code+" ") {
			t.Errorf("code %s has a scenario but is not in docs/tools.md's tables", code)
		}
	}
	for _, code := range codes {
		if c := cases[code]; c.gap != "" {
			t.Logf("%s: not produced by any test: %s", code, c.gap)
		} else if c.by != "" {
			file, name, _ := strings.Cut(c.by, ":")
			src, err := os.ReadFile(filepath.Join("..", file))
			if err != nil || !strings.Contains(string(src), "func "+name+"(") {
				t.Errorf("%s: the test named for it, %s, does not exist", code, c.by)
			}
		}
	}
	if t.Failed() {
		return
	}

	h := newCodesHarness(t)
	var last []string
	for _, code := range codes {
		c := cases[code]
		if c.run == nil {
			continue
		}
		if code == "BACKEND_CLOSED" {
			last = append(last, code)
			continue
		}
		t.Run(code, func(t *testing.T) { c.run(t, h) })
	}
	for _, code := range last {
		t.Run(code, func(t *testing.T) { cases[code].run(t, h) })
	}
}
