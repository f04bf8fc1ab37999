package gateway

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/isogate/isogate/config"
	"github.com/isogate/isogate/internal/app"
	"github.com/isogate/isogate/internal/backend"
	"github.com/isogate/isogate/v8sandbox"
	"github.com/isogate/isogate/v8sandbox/procpool"
)

// TestFirstCallsWithStartingAndDeadBackends: with an empty cache, the first
// call to a backend that is still starting (the real server-everything)
// waits for it and succeeds; a backend whose command does not exist fails
// with an error naming it and its cause; search_tools says it is down. All
// through an MCP client, right after Start.
func TestFirstCallsWithStartingAndDeadBackends(t *testing.T) {
	const missing = "/nonexistent/isogate-dead-backend"
	// Secrets of the gateway and of other programs never reach a backend.
	t.Setenv("ISOGATE_SERVER__AUTH_TOKEN", "gateway-secret-token")
	t.Setenv("OTHER_BACKEND_API_KEY", "other-secret-key")
	cfg := config.Default()
	cfg.Server.CacheDir = t.TempDir() // empty cache
	cfg.Sandbox.Isolation = config.IsolationThread
	cfg.Sandbox.Timeout = 30 * time.Second
	cfg.Sandbox.BackendWait = 30 * time.Second
	cfg.Backends = map[string]config.Backend{
		"everything": {Name: "everything", Transport: config.TransportStdio, Command: "node",
			Args: []string{everythingPath(t), "stdio"}, Timeout: 10 * time.Second, MaxConcurrentCalls: 8,
			Env: map[string]string{"EVERYTHING_OWN_SETTING": "its-own-value"}},
		"dead": {Name: "dead", Transport: config.TransportStdio, Command: missing, Timeout: 10 * time.Second, MaxConcurrentCalls: 8},
	}
	g := startGateway(t, cfg, app.Options{Runner: testPool()})
	cs := connect(t, g, nil)
	call := func(tool string, args map[string]any) (string, bool) {
		t.Helper()
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: args})
		if err != nil {
			t.Fatal(err)
		}
		return res.Content[0].(*mcp.TextContent).Text, res.IsError
	}

	if text, isErr := call("call_tool_chain", map[string]any{"code": `return await everything.get_sum({a: 40, b: 2})`}); isErr || !strings.Contains(text, "42") {
		t.Fatalf("first call on an empty cache: %s", text)
	}
	// server-everything's get-env shows the environment it was started with.
	env, isErr := call("call_tool_chain", map[string]any{"code": `return await everything.get_env({})`})
	if isErr || !strings.Contains(env, "its-own-value") || !strings.Contains(env, "PATH") {
		t.Fatalf("backend environment lacks its own env or the base: %.500s", env)
	}
	for _, secret := range []string{"ISOGATE_SERVER__AUTH_TOKEN", "gateway-secret-token", "OTHER_BACKEND_API_KEY", "other-secret-key"} {
		if strings.Contains(env, secret) {
			t.Fatalf("%s reached the backend's environment", secret)
		}
	}
	text, isErr := call("call_tool_chain", map[string]any{"code": `return await dead.anything({})`})
	if !isErr || !strings.Contains(text, `backend "dead" is unavailable`) || !strings.Contains(text, missing) {
		t.Fatalf("call to a dead backend: %s", text)
	}
	text, _ = call("search_tools", map[string]any{"query": "sum"})
	if !strings.Contains(text, "everything.get-sum") || !strings.Contains(text, "Down (") || !strings.Contains(text, "dead") {
		t.Fatalf("search_tools does not report the dead backend:\n%s", text)
	}
	if strings.Contains(text, "Still connecting") {
		t.Fatalf("search_tools reports a connected backend as connecting:\n%s", text)
	}
}

// TestLookupOfStartingBackendEndsAtTheRunDeadline: in process isolation a
// program that touches a backend still connecting holds its worker's V8
// thread while the host waits. The wait ends with the run's own deadline
// (TIMEOUT), not with sandbox.backend_wait or the pool's grace, so the
// worker answers in time and is not killed.
func TestLookupOfStartingBackendEndsAtTheRunDeadline(t *testing.T) {
	isolations(t, testLookupOfStartingBackend)
}

func testLookupOfStartingBackend(t *testing.T, mode config.Isolation) {
	var runner v8sandbox.Runner = testPool()
	var pool *procpool.Pool
	if mode == config.IsolationProcess {
		// A grace for the worker to answer after the deadline, below code
		// mode's own second of grace: a wait that outlived the deadline
		// would make the pool kill the worker.
		var err error
		if pool, err = procpool.New(procpool.Options{Workers: 1, SlotsPerWorker: 1, Grace: 900 * time.Millisecond}); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(pool.Close)
		runner = pool
	}
	cfg := config.Default()
	cfg.Server.CacheDir = t.TempDir()
	cfg.Sandbox.Isolation = mode
	cfg.Sandbox.Timeout = time.Minute // the most a call's own timeout may ask
	cfg.Backends = map[string]config.Backend{}
	held := backend.Spec{Backend: config.Backend{Name: "held", Transport: backend.TransportCustom},
		Dial: func(ctx context.Context) (mcp.Transport, error) { <-ctx.Done(); return nil, ctx.Err() }}
	cs := connect(t, startGateway(t, cfg, app.Options{Runner: runner, StartWait: 10 * time.Minute, ExtraSpecs: []backend.Spec{held}}), nil)
	// A sync lookup (property access), and an async call caught by the
	// script: both end as the run's TIMEOUT naming the wait. A deadline
	// that strikes before the program ran (its context prepared on a
	// loaded machine) names no wait, and no console line: the call is
	// made again with a doubled deadline.
	for _, code := range []string{`console.log("started"); return typeof held.anything`,
		`console.log("started"); try { return await held.anything({}) } catch (e) { return "caught: " + e }`} {
		for timeout := 1500; ; timeout *= 2 {
			res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "call_tool_chain",
				Arguments: map[string]any{"code": code, "timeout": timeout}})
			if err != nil {
				t.Fatal(err)
			}
			text := res.Content[0].(*mcp.TextContent).Text
			if !res.IsError || !strings.HasPrefix(text, "TIMEOUT") {
				t.Fatalf("%s: waiting for a starting backend past the run's deadline: %s", code, text)
			}
			if !strings.Contains(text, "[console]\nstarted") && timeout < 20000 {
				t.Logf("the deadline of %d ms struck before the program started; trying a longer one", timeout)
				continue
			}
			if !strings.Contains(text, `backend "held" to start`) {
				t.Fatalf("%s: waiting for a starting backend past the run's deadline: %s", code, text)
			}
			break
		}
	}
	if pool != nil {
		if st := pool.Stats(); st.Killed != 0 {
			t.Fatalf("the worker was killed (%d): the host wait outlived the run's deadline", st.Killed)
		}
	}
}
