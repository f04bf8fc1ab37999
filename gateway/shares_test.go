package gateway

import (
	"context"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/isogate/isogate/config"
	"github.com/isogate/isogate/internal/backend"
)

// The fair-share attacks: bob and alice are principals of one gateway
// (server.auth.mode: token); bob loads the gateway as hard as his share
// allows, and alice's first run or call must still go through at once.

// sharesConfig is token authentication for alice and bob, then more.
func sharesConfig(more func(*config.Config)) func(*config.Config) {
	return func(c *config.Config) {
		c.Server.Auth.Mode = config.AuthToken
		c.Server.Auth.Tokens = map[string]config.StaticToken{"alice": {Token: "alice-token"}, "bob": {Token: "bob-token"}}
		if more != nil {
			more(c)
		}
	}
}

// chainAsync runs a program on cs in the background; its text and isError
// arrive on the returned channel.
func chainAsync(ctx context.Context, cs *mcp.ClientSession, code string) chan chainOutcome {
	ch := make(chan chainOutcome, 1)
	go func() {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "call_tool_chain", Arguments: map[string]any{"code": code}})
		if err != nil {
			ch <- chainOutcome{err: err}
			return
		}
		ch <- chainOutcome{text: res.Content[0].(*mcp.TextContent).Text, isError: res.IsError}
	}()
	return ch
}

type chainOutcome struct {
	text    string
	isError bool
	err     error
}

// metricsOf reads the gateway's /metrics.
func (h *httpGateway) metricsOf(t *testing.T) string {
	t.Helper()
	resp, err := http.Get(strings.TrimSuffix(h.url, "/mcp") + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return string(body)
}

// awaitMetric polls /metrics until it has line, failing the test when ctx
// ends first or when unexpected receives something meanwhile (the state
// the metric stands for was bypassed).
func (h *httpGateway) awaitMetric(t *testing.T, ctx context.Context, line string, unexpected <-chan struct{}, what string) {
	t.Helper()
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for !strings.Contains(h.metricsOf(t), line) {
		select {
		case <-ctx.Done():
			t.Fatalf("%s: /metrics never showed %s", what, line)
		case <-unexpected:
			t.Fatalf("%s: it was not held back", what)
		case <-tick.C:
		}
	}
}

// TestV8SlotsSharedBetweenPrincipals: bob holds his share of the V8 slots
// (programs blocked in a host call) with one more run queued behind it;
// his next run is refused with PRINCIPAL_BUSY at once, and alice's trivial
// program runs right away, although one principal could otherwise hold
// every slot.
func TestV8SlotsSharedBetweenPrincipals(t *testing.T) {
	h := newHTTPGateway(t, sharesConfig(func(c *config.Config) {
		c.Sandbox.MaxConcurrent = 2
		c.Sandbox.MaxConcurrentPerPrincipal = 1
	}))
	bob := h.connect(t, &http.Client{Transport: bearer{"bob-token"}})
	alice := h.connect(t, &http.Client{Transport: bearer{"alice-token"}})
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	bobCtx, stopBob := context.WithCancel(ctx)
	defer stopBob()

	first := chainAsync(bobCtx, bob, `await local.block({}); return 1`)
	<-h.started
	second := chainAsync(bobCtx, bob, `await local.block({}); return 2`)
	h.awaitMetric(t, ctx, `isogate_principal_share_hits_total{backend="",outcome="waited",pool="sandbox"} 1`,
		h.started, "bob's second program")

	third := <-chainAsync(ctx, bob, `return 3`)
	if third.err != nil || !third.isError || !strings.Contains(third.text, "PRINCIPAL_BUSY") {
		t.Fatalf("bob's run past his share: %+v, want PRINCIPAL_BUSY at once", third)
	}
	got := <-chainAsync(ctx, alice, `return 6 * 7`)
	if got.err != nil || got.isError || !strings.Contains(got.text, "42") {
		t.Fatalf("alice's program while bob holds his share: %+v", got)
	}
	if m := h.metricsOf(t); !strings.Contains(m, `isogate_principal_share_hits_total{backend="",outcome="refused",pool="sandbox"} 1`) {
		t.Error("/metrics does not count bob's refused run")
	}
	stopBob()
	<-first
	<-second
}

// gatedBackend is an in-process backend whose "hold" tool waits until gate
// is closed (or the call is cancelled), telling held when it starts, and
// whose "ping" tool answers at once. It has two call slots, one per
// principal.
func gatedBackend(gate chan struct{}, held chan struct{}) backend.Spec {
	srv := mcp.NewServer(&mcp.Implementation{Name: "gated"}, nil)
	mcp.AddTool(srv, &mcp.Tool{Name: "hold", Description: "Waits for the test's gate."},
		func(ctx context.Context, _ *mcp.CallToolRequest, _ map[string]any) (*mcp.CallToolResult, any, error) {
			held <- struct{}{}
			select {
			case <-gate:
			case <-ctx.Done():
			}
			return textResult("released", false), nil, nil
		})
	mcp.AddTool(srv, &mcp.Tool{Name: "ping", Description: "Answers pong."},
		func(context.Context, *mcp.CallToolRequest, map[string]any) (*mcp.CallToolResult, any, error) {
			return textResult("pong", false), nil, nil
		})
	spec := backend.InMemory("gated", srv)
	spec.MaxConcurrentCalls = 2
	spec.MaxConcurrentCallsPerPrincipal = 1
	spec.Timeout = time.Minute
	return spec
}

// TestBackendCallSlotsSharedBetweenPrincipals: bob's program holds his
// share of a backend's call slots with one more call queued; alice's call
// to the same backend goes through at once.
func TestBackendCallSlotsSharedBetweenPrincipals(t *testing.T) {
	gate, held := make(chan struct{}), make(chan struct{}, 4)
	var closeGate sync.Once
	release := func() { closeGate.Do(func() { close(gate) }) }
	defer release()
	h := newHTTPGateway(t, sharesConfig(nil), gatedBackend(gate, held))
	bob := h.connect(t, &http.Client{Transport: bearer{"bob-token"}})
	alice := h.connect(t, &http.Client{Transport: bearer{"alice-token"}})
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()

	bobs := chainAsync(ctx, bob, `const r = await Promise.all([gated.hold({}), gated.hold({})]); return r.length`)
	<-held
	h.awaitMetric(t, ctx, `isogate_principal_share_hits_total{backend="gated",outcome="waited",pool="backend"} 1`,
		held, "bob's second call")

	got := <-chainAsync(ctx, alice, `return await gated.ping({})`)
	if got.err != nil || got.isError || !strings.Contains(got.text, "pong") {
		t.Fatalf("alice's call while bob holds his share: %+v", got)
	}
	release()
	if out := <-bobs; out.err != nil || out.isError {
		t.Fatalf("bob's program: %+v", out)
	}
}

// TestResultStoreSharePerPrincipal: bob stores a large result from each of
// four sessions; alice's large result is still stored and readable (his
// sessions share one principal's budget), and none of bob's sessions reads
// it.
func TestResultStoreSharePerPrincipal(t *testing.T) {
	h := newHTTPGateway(t, sharesConfig(func(c *config.Config) {
		c.Sandbox.Output.ResultStoreBytes = 4 << 20 // a principal's share: 1 MiB
	}))
	big := func(cs *mcp.ClientSession, letter string) string {
		t.Helper()
		text, isErr, _ := callText(t, cs, "call_tool_chain",
			map[string]any{"code": `return "` + letter + `".repeat(900000)`, "max_output_size": 1000})
		uri := resultURIRE.FindString(text)
		if isErr || uri == "" {
			t.Fatalf("%s's result was not stored (isError %v): %.300s", letter, isErr, text)
		}
		return uri
	}
	var bobs []*mcp.ClientSession
	for range 4 {
		s := h.connect(t, &http.Client{Transport: bearer{"bob-token"}})
		bobs = append(bobs, s)
		big(s, "b")
	}
	alice := h.connect(t, &http.Client{Transport: bearer{"alice-token"}})
	uri := big(alice, "a")
	text, isErr := readResult(t, alice, map[string]any{"uri": uri, "limit": 10})
	if isErr || !strings.HasPrefix(text, `aaaaaaaaaa`) {
		t.Fatalf("alice cannot read her result: %.200s", text)
	}
	for i, s := range bobs {
		if text, isErr := readResult(t, s, map[string]any{"uri": uri}); !isErr || strings.Contains(text, "aaaa") {
			t.Fatalf("bob's session %d read alice's result", i)
		}
	}
}
