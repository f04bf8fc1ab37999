package gateway

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/isogate/isogate/config"
	"github.com/isogate/isogate/internal/app"
	"github.com/isogate/isogate/internal/backend"
	"github.com/isogate/isogate/internal/codemode"
	"github.com/isogate/isogate/v8sandbox"
	"github.com/isogate/isogate/v8sandbox/procpool/corpus"
)

type tickArgs struct {
	Args []any `json:"args,omitempty"`
}

// corpusBackend serves the corpus's tick() as a tool.
func corpusBackend() backend.Spec {
	srv := mcp.NewServer(&mcp.Implementation{Name: "corpus"}, nil)
	var ticks atomic.Int64
	mcp.AddTool(srv, &mcp.Tool{Name: "tick", Description: "Waits 1 ms and counts."},
		func(ctx context.Context, _ *mcp.CallToolRequest, in tickArgs) (*mcp.CallToolResult, any, error) {
			if len(in.Args) > 0 && in.Args[0] == "fail" {
				return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "tick failed"}}}, nil, nil
			}
			select {
			case <-time.After(time.Millisecond):
			case <-ctx.Done():
				return nil, nil, ctx.Err()
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf(`{"n": %d}`, ticks.Add(1))}}}, nil, nil
		})
	return backend.InMemory("corpus", srv)
}

// TestHostileCorpusThroughCodeMode runs every hostile program through
// call_tool_chain in both isolation modes: each ends within its deadline
// + 15 s (a hang guard) with its typed error, and a normal call succeeds afterwards.
func TestHostileCorpusThroughCodeMode(t *testing.T) {
	cases, err := corpus.Load(corpus.Dir())
	if err != nil {
		t.Fatal(err)
	}
	if len(cases) < 40 {
		t.Fatalf("corpus has %d cases, want at least 40", len(cases))
	}
	isolations(t, func(t *testing.T, mode config.Isolation) {
		t.Parallel()
		cfg := config.Default()
		cfg.Server.CacheDir = t.TempDir()
		cfg.Sandbox.Isolation = mode
		cfg.Sandbox.MaxHeapMB = corpus.DefaultHeapMB
		var runner v8sandbox.Runner
		if mode == config.IsolationThread {
			runner = testPool()
		}
		g, err := build(cfg, app.Options{Runner: runner, ExtraSpecs: []backend.Spec{corpusBackend()}})
		if err != nil {
			t.Fatal(err)
		}
		defer g.Close()
		g.Start(context.Background())
		if err := g.app.Backends.WaitHealthy(t.Context()); err != nil {
			t.Fatal(err)
		}
		for _, c := range cases {
			if c.ProcessOnly && mode == config.IsolationThread {
				continue
			}
			t.Run(c.Name, func(t *testing.T) { runCorpusCase(t, g, c) })
		}
	})
}

// strictCodes are outcomes code mode must reproduce exactly. Output limits
// differ by design (code mode truncates output instead of failing), and
// emit() becomes console.log, so those cases only need to end in time.
var strictCodes = []v8sandbox.Code{v8sandbox.CodeTimeout, v8sandbox.CodeHeapLimit, v8sandbox.CodeEval}

// codeModeExpect overrides a case's expectation where code mode is
// deliberately different.
var codeModeExpect = map[string][]v8sandbox.Code{
	// The throw becomes the main promise's rejection, which code mode
	// describes without calling the thrown object's looping toString.
	"throw_tostring_loop": {v8sandbox.CodeEval},
	// Code mode renders results through internal/jsvalue, which serializes
	// what JSON.stringify rejects (BigInt, cycles, throwing getters and
	// Proxies, endless toJSON, deep nesting) instead of failing the run.
	"bigint_result":           {corpus.OK},
	"getter_throws_in_result": {corpus.OK},
	"json_cycle_result":       {corpus.OK},
	"proxy_result_throws":     {corpus.OK},
	"recursion_in_tojson":     {corpus.OK, v8sandbox.CodeEval},
	"json_parse_deep_nesting": {corpus.OK, v8sandbox.CodeTimeout, v8sandbox.CodeEval, v8sandbox.CodeHeapLimit},
}

// emitsUntilDeadline are the cases that emit forever, which the host's
// output cap ends (OUTPUT_LIMIT) in the sandbox alone. In code mode emit()
// is console.log, which truncates instead of failing, so they run until
// their deadline: TIMEOUT, exactly, with the quick deadline of the other
// TIMEOUT cases (their corpus default, 5 s, was a wait and no work).
var emitsUntilDeadline = map[string]bool{"emit_flood": true, "emit_flood_caught": true, "tamper_overwrite_host_functions": true}

func runCorpusCase(t *testing.T, g *Gateway, c corpus.Case) {
	if expect, ok := codeModeExpect[c.Name]; ok {
		c.Expect = expect
	}
	if emitsUntilDeadline[c.Name] {
		c.Expect = []v8sandbox.Code{v8sandbox.CodeTimeout}
	}
	if slices.Equal(c.Expect, []v8sandbox.Code{v8sandbox.CodeTimeout}) {
		c.Timeout = min(c.Timeout, 300*time.Millisecond) // keeps the suite quick; the bound is what matters
	}
	src, _ := json.Marshal(c.Source)
	code := "globalThis.tick = async (...args) => (await corpus.tick({args})).n;\n" +
		"globalThis.emit = (s) => console.log(String(s));\n" +
		"return await (0, eval)(" + string(src) + ");"
	start := time.Now()
	resp := g.app.Engine.Execute(context.Background(), codemode.Request{Code: code, Timeout: c.Timeout})
	elapsed := time.Since(start)
	// A hang guard, not a performance assertion: generous enough for a
	// loaded machine (the cases that ignore termination would otherwise run
	// for tens of seconds).
	if elapsed > c.Timeout+15*time.Second {
		t.Errorf("took %v, deadline %v + 15s", elapsed, c.Timeout)
	}
	okAccepted := slices.Contains(c.Expect, corpus.OK)
	strict := (!slices.Contains(c.Uses, "emit") || emitsUntilDeadline[c.Name]) && len(c.Expect) > 0
	for _, code := range c.Expect {
		strict = strict && (code == corpus.OK || slices.Contains(strictCodes, code))
	}
	switch {
	case okAccepted && !resp.IsError:
		if resp.Text == "" {
			t.Errorf("success with an empty result")
		}
	case strict && !slices.Contains(c.Expect, resp.Code):
		t.Errorf("got %q (%s), want one of %v", resp.Code, firstLine(resp.Text), c.Expect)
	case len(c.Expect) == 0 && resp.IsError && !slices.Contains(c.Uses, "emit"):
		t.Errorf("want success, got %s", firstLine(resp.Text))
	}
	after := g.app.Engine.Execute(context.Background(), codemode.Request{Code: `const n = await corpus.tick({}); return typeof n.n`})
	if after.IsError || after.Text != `number` {
		t.Fatalf("normal call after %s failed: %s", c.Name, after.Text)
	}
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

// TestHostileToolNames checks that tool and backend names cannot inject
// code into the bridge and stay callable.
func TestHostileToolNames(t *testing.T) {
	isolations(t, func(t *testing.T, mode config.Isolation) {
		srv := mcp.NewServer(&mcp.Implementation{Name: "evil"}, nil)
		names := []string{`"); globalThis.pwned = 1; ("`, "__proto__", "constructor", "a\"b\\c", "x\u2028y", "</script>", "123start", "has.dots"}
		for _, name := range names {
			mcp.AddTool(srv, &mcp.Tool{Name: name, Description: "hostile name"},
				func(ctx context.Context, _ *mcp.CallToolRequest, in map[string]any) (*mcp.CallToolResult, any, error) {
					return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf("%q", name)}}}, nil, nil
				})
		}
		cfg := config.Default()
		cfg.Server.CacheDir = t.TempDir()
		cfg.Sandbox.Isolation = mode
		g, err := build(cfg, app.Options{ExtraSpecs: []backend.Spec{backend.InMemory("evil-backend", srv)}})
		if err != nil {
			t.Fatal(err)
		}
		defer g.Close()
		g.Start(context.Background())
		if err := g.app.Backends.WaitHealthy(t.Context()); err != nil {
			t.Fatal(err)
		}
		r := g.app.Engine.Execute(context.Background(), codemode.Request{Code: `
			const names = Object.keys(__interfaces["evil-backend"]);
			const results = [];
			for (const n of names) results.push(await evil_backend[n]({}));
			return {pwned: typeof globalThis.pwned, count: names.length, results, proto: Object.getPrototypeOf(evil_backend) === Object.prototype};`})
		if r.IsError {
			t.Fatal(r.Text)
		}
		var out struct {
			Pwned   string   `json:"pwned"`
			Count   int      `json:"count"`
			Results []string `json:"results"`
			Proto   bool     `json:"proto"`
		}
		if err := json.Unmarshal(r.Value, &out); err != nil {
			t.Fatal(err)
		}
		if out.Pwned != "undefined" || out.Count != len(names) || len(out.Results) != len(names) || !out.Proto {
			t.Fatalf("hostile names: %s", r.Value)
		}
	})
}
