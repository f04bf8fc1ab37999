package gateway

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/isogate/isogate/config"
	"github.com/isogate/isogate/internal/app"
	"github.com/isogate/isogate/internal/backend"
	"github.com/isogate/isogate/v8sandbox"
)

// bridgeHarness is a gateway started on an empty tool cache, with the real
// server-everything, a backend whose command does not exist ("ghost") and
// an in-process backend, driven by a real MCP client. Nothing waits for
// the backends: the first call must.
type bridgeHarness struct {
	cs        *mcp.ClientSession
	cancelled chan struct{} // one value per cancelled slow-op call
	strictEnd chan struct{} // one value per ended call of "strict" (its own 300 ms timeout)
	started   atomic.Int32  // slow-op calls that reached the backend
}

func newBridgeHarness(t *testing.T, mode config.Isolation) *bridgeHarness {
	t.Helper()
	h := &bridgeHarness{cancelled: make(chan struct{}, 16), strictEnd: make(chan struct{}, 16)}
	cfg := config.Default()
	cfg.Server.CacheDir = t.TempDir()
	cfg.Sandbox.Timeout = 60 * time.Second
	cfg.Sandbox.Isolation = mode
	cfg.Sandbox.MaxToolCalls = 5000
	cfg.Sandbox.MaxHeapMB = 16 // the value-release case needs 20 MB of dropped results to prove its point
	cfg.Backends = map[string]config.Backend{
		"everything": {Name: "everything", Transport: config.TransportStdio, Command: "node",
			Args: []string{everythingPath(t), "stdio"}, Timeout: 10 * time.Second, MaxConcurrentCalls: 8},
		"ghost": {Name: "ghost", Transport: config.TransportStdio, Command: "/nonexistent/isogate-no-such-command",
			Timeout: 10 * time.Second, MaxConcurrentCalls: 8},
	}
	local := mcp.NewServer(&mcp.Implementation{Name: "local"}, nil)
	mcp.AddTool(local, &mcp.Tool{Name: "slow-op", Description: "Sleeps for ms milliseconds unless cancelled."},
		func(ctx context.Context, _ *mcp.CallToolRequest, in slowArgs) (*mcp.CallToolResult, any, error) {
			h.started.Add(1)
			select {
			case <-time.After(time.Duration(in.MS) * time.Millisecond):
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: `{"slept":true}`}}}, nil, nil
			case <-ctx.Done():
				h.cancelled <- struct{}{}
				return nil, nil, ctx.Err()
			}
		})
	mcp.AddTool(local, &mcp.Tool{Name: "noop", Description: "Returns ok."},
		func(ctx context.Context, _ *mcp.CallToolRequest, in map[string]any) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: `{"ok":true}`}}}, nil, nil
		})
	mcp.AddTool(local, &mcp.Tool{Name: "echo", Description: "Returns its message."},
		func(ctx context.Context, _ *mcp.CallToolRequest, in struct {
			Message string `json:"message"`
		}) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: in.Message}}}, nil, nil
		})
	mcp.AddTool(local, &mcp.Tool{Name: "refuse", Description: "Always answers with a tool error."},
		func(ctx context.Context, _ *mcp.CallToolRequest, in map[string]any) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "no way"}}}, nil, nil
		})
	strictServer := mcp.NewServer(&mcp.Implementation{Name: "strict"}, nil)
	mcp.AddTool(strictServer, &mcp.Tool{Name: "hang", Description: "Waits until cancelled."},
		func(ctx context.Context, _ *mcp.CallToolRequest, in map[string]any) (*mcp.CallToolResult, any, error) {
			<-ctx.Done()
			h.strictEnd <- struct{}{}
			return nil, nil, ctx.Err()
		})
	strict := backend.InMemory("strict", strictServer)
	strict.Timeout = 300 * time.Millisecond // the backend's own per-call timeout
	var runner v8sandbox.Runner = testPool()
	if mode == config.IsolationProcess {
		runner = nil
	}
	h.cs = connect(t, startGateway(t, cfg, app.Options{Runner: runner, ExtraSpecs: []backend.Spec{backend.InMemory("local", local), strict}}), nil)
	return h
}

func (h *bridgeHarness) chain(t *testing.T, args map[string]any) (string, bool) {
	t.Helper()
	res, err := h.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "call_tool_chain", Arguments: args})
	if err != nil {
		t.Fatal(err)
	}
	return res.Content[0].(*mcp.TextContent).Text, res.IsError
}

// TestCodeModeBridge covers issue 11/12/13's bridge behaviour through a
// real MCP client, in both isolation modes.
func TestCodeModeBridge(t *testing.T) {
	isolations(t, func(t *testing.T, mode config.Isolation) {
		t.Parallel()
		h := newBridgeHarness(t, mode)
		ok := func(t *testing.T, args map[string]any, wants ...string) string {
			t.Helper()
			text, isErr := h.chain(t, args)
			if isErr {
				t.Fatalf("failed: %s", text)
			}
			for _, w := range wants {
				if !strings.Contains(text, w) {
					t.Fatalf("lacks %q:\n%s", w, text)
				}
			}
			return text
		}
		fails := func(t *testing.T, args map[string]any, wants ...string) string {
			t.Helper()
			text, isErr := h.chain(t, args)
			if !isErr {
				t.Fatalf("succeeded: %s", text)
			}
			for _, w := range wants {
				if !strings.Contains(text, w) {
					t.Fatalf("lacks %q:\n%s", w, text)
				}
			}
			return text
		}

		t.Run("first call on an empty cache waits for the backend", func(t *testing.T) {
			ok(t, map[string]any{"code": `return await everything.get_sum({a: 20, b: 22})`}, "42")
		})
		t.Run("a dead backend exists and names its cause", func(t *testing.T) {
			ok(t, map[string]any{"code": `return [typeof ghost, typeof globalThis["ghost"]]`}, `"object"`)
			fails(t, map[string]any{"code": `return await ghost.anything({})`},
				`backend "ghost" is unavailable:`, "isogate-no-such-command", "isogate://backend/ghost")
		})
		t.Run("failures reach catch as typed errors", func(t *testing.T) {
			// The same e.name, e.code, e.message and e.data in both
			// isolation modes: the code travels as data, not in the text.
			text := ok(t, map[string]any{"code": `const out = [];
for (const f of [() => ghost.anything({}), () => local.refuse({}), () => strict.hang({})]) {
  try { await f(); out.push("ok") } catch (e) { out.push([e instanceof Error, e.name, e.code, e.data ?? null, e.message]) }
}
return out.map((x) => JSON.stringify(x)).join("\n")`})
			// A string result is returned as its text.
			for _, want := range []string{
				`[true,"Error","BACKEND_UNAVAILABLE",null,"backend \"ghost\" is unavailable`,
				`[true,"Error","TOOL_ERROR",{"tool":"local.refuse"},"local.refuse failed: no way"]`,
				`[true,"Error","BACKEND_TIMEOUT",null,`,
			} {
				if !strings.Contains(text, want) {
					t.Errorf("lacks %s:\n%s", want, text)
				}
			}
		})
		t.Run("program shapes", func(t *testing.T) {
			for code, want := range map[string]string{
				`everything.get_sum({a: 1, b: 1})`:                     "2",
				"const x = 40;\nx + 2":                                 "42",
				"async function main() {\n  return 7;\n}":              "7",
				"async () => {\n  return 8;\n}":                        "8",
				"(async () => {\n  return 9;\n})()":                    "9",
				"```js\nreturn 10\n```":                                "10",
				"```typescript\nconst n: number = 11;\nn\n```":         "11",
				"const r = await everything.get_sum({a: 6, b: 6});\nr": "12",
			} {
				if text := ok(t, map[string]any{"code": code}); !strings.Contains(text, want) || strings.Contains(text, "returned nothing") {
					t.Fatalf("%q: %s", code, text)
				}
			}
		})
		t.Run("hints", func(t *testing.T) {
			fails(t, map[string]any{"code": `return await everything.get-sum({a: 1, b: 2})`}, `everything["get-sum"]({...})`)
			fails(t, map[string]any{"code": `return await fetch("https://example.com")`}, "no network access")
			fails(t, map[string]any{"code": `await new Promise(r => setTimeout(r, 10)); return 1`}, "There are no timers")
			fails(t, map[string]any{"code": "import fs from 'fs';\nreturn fs.readFileSync('/etc/passwd')"}, "cannot import modules")
			fails(t, map[string]any{"code": "const fs = require('fs');\nreturn fs.readFileSync('/etc/passwd')"}, `require("fs") is not available`, "Call backend tools instead")
			fails(t, map[string]any{"code": `return await everything.search_tools({query: "sum"})`}, "`search_tools` is an MCP tool of the gateway")
		})
		t.Run("the host decides what a call is", func(t *testing.T) {
			// A script-defined toJSON must not redirect the call to another tool.
			text := ok(t, map[string]any{"code": `Array.prototype.toJSON = function () { return ["local", "slow-op", {ms: 30000}]; };
				return await local.noop({})`}, `"ok": true`)
			if strings.Contains(text, "slept") {
				t.Fatal(text)
			}
			ok(t, map[string]any{"code": `return [local["not-a-tool"], "slow-op" in local, Object.keys(local).includes("slow_op")]`},
				"null", "true")
			// Nor blank the description of the error the program ends with.
			fails(t, map[string]any{"code": `Object.prototype.toJSON = () => ({}); await local.noop({}); throw new TypeError("still described")`},
				"TypeError: still described")
		})
		t.Run("timeout is the run's, naming the call in flight", func(t *testing.T) {
			text := fails(t, map[string]any{"code": `return await local.slow_op({ms: 30000})`, "timeout": 300},
				"TIMEOUT: execution exceeded 300 ms while waiting for local.slow-op")
			if strings.Contains(text, "isogate://backend") || strings.Contains(text, "unavailable") {
				t.Fatalf("blames the backend: %s", text)
			}
			<-h.cancelled
		})
		t.Run("a backend's own timeout is the backend's error", func(t *testing.T) {
			text := fails(t, map[string]any{"code": `return await strict.hang({})`}, `backend "strict"`, `tool "hang"`)
			if strings.Contains(text, "TIMEOUT: execution exceeded") {
				t.Fatalf("blames the run's deadline: %s", text)
			}
			<-h.strictEnd
		})
		t.Run("caller timeout is clamped", func(t *testing.T) {
			ok(t, map[string]any{"code": `return 1`, "timeout": 1e15}, "[warning] timeout of", "clamped to 60000 ms")
			// max_output_size too: the default sandbox.max_output_size (200 000) holds.
			text := ok(t, map[string]any{"code": `return "a".repeat(300000)`, "max_output_size": 1e15},
				"[warning] max_output_size of", "clamped to 200000 bytes", "isogate://result/")
			if len(text) > 200_000+200 {
				t.Fatalf("%d bytes returned", len(text))
			}
		})
		t.Run("pending calls end with the run", func(t *testing.T) {
			before := h.started.Load()
			// An un-awaited call is waited for until shortly before the run's
			// deadline (issue 23), then cancelled; the value is still returned.
			ok(t, map[string]any{"code": `local.slow_op({ms: 30000}); await local.noop({}); return "done"`, "timeout": 2000}, "done\n",
				"1 call to local.slow-op was not awaited; it had not finished near the run's deadline and was cancelled")
			// The un-awaited call either never started or is cancelled now
			// that the run is over; it never runs to its end.
			ok(t, map[string]any{"code": `return await local.noop({})`})
			if h.started.Load() > before {
				select {
				case <-h.cancelled:
				case <-time.After(15 * time.Second):
					t.Fatal("the un-awaited call was not cancelled when the run returned")
				}
			}
		})
		t.Run("bridge values are released", func(t *testing.T) {
			// 300 sequential results of 3 000 empty objects each (9 KB of
			// JSON, about 90 KB of heap once parsed: about 27 MB in all)
			// under a 16 MB heap cap: HEAP_LIMIT unless each dropped result
			// is collectable (keeping them fails so). Few bytes cross the
			// bridge, so the case stays cheap under -race in both modes.
			ok(t, map[string]any{"code": `const s = "[" + "{},".repeat(2999) + "{}]"; let n = 0;
				for (let i = 0; i < 300; i++) n += (await local.echo({message: s})).length;
				return n`}, "900000")
		})
	})
}
