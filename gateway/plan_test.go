package gateway

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/isogate/isogate/config"
	"github.com/isogate/isogate/internal/app"
	"github.com/isogate/isogate/internal/backend"
	"github.com/isogate/isogate/internal/pipeline"
	"github.com/isogate/isogate/internal/surface"
	"github.com/isogate/isogate/internal/typecheck"
)

// storeBackend records every call it receives ("tool:id"): read is
// allowed, write under approval, wipe denied.
type storeBackend struct{ callLog }

func (s *storeBackend) spec() backend.Spec {
	spec := s.serve("store", func(tool, id string) string { return tool + ":" + id }, "read", "write", "wipe")
	spec.Tools = config.ToolPolicy{Deny: []string{"wipe"}, Approve: []string{"write"}}
	return spec
}

func planGateway(t *testing.T, mode string, planApproval bool) (*Gateway, *storeBackend) {
	t.Helper()
	cfg := config.Default()
	cfg.Server.CacheDir = t.TempDir()
	cfg.Sandbox.Isolation = config.IsolationThread
	cfg.Sandbox.TrustedCode = true
	cfg.Sandbox.Typecheck = mode
	cfg.Sandbox.TypecheckTimeout = time.Minute // a loaded machine must not turn a check into "unchecked"
	cfg.Sandbox.PlanApproval = planApproval
	store := &storeBackend{}
	g := startHealthy(t, cfg, app.Options{Runner: testPool(), ExtraSpecs: []backend.Spec{store.spec()}})
	if mode != "off" {
		if err := typecheck.Shared().Warm(t.Context()); err != nil {
			t.Fatal(err)
		}
	}
	return g, store
}

// runRecord reads the record of the run that answered res.
func runRecord(t *testing.T, cs *mcp.ClientSession, res *mcp.CallToolResult) pipeline.RunRecord {
	t.Helper()
	id, _ := res.Meta["isogate/run"].(string)
	rr, err := cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: surface.RunURIPrefix + id})
	if err != nil {
		t.Fatal(err)
	}
	var rec pipeline.RunRecord
	if err := json.Unmarshal([]byte(rr.Contents[0].Text), &rec); err != nil {
		t.Fatal(err)
	}
	return rec
}

// A checked program that may call a denied tool is refused before its
// first call (PLAN_DENIED, naming the call and its line), in warn mode as
// in strict; unchecked (off), it runs until the denied call, as before.
func TestPlanDeniedToolRefusedBeforeFirstCall(t *testing.T) {
	const program = "await store.read({id:'r1'});\nif (Math.random() > 2) await store.wipe({id:'all'});\nreturn 'done'"
	for _, mode := range []string{"warn", "strict"} {
		t.Run(mode, func(t *testing.T) {
			g, store := planGateway(t, mode, false)
			cs := connect(t, g, nil)
			text, isErr, res := callText(t, cs, "call_tool_chain", map[string]any{"code": program})
			want := "PLAN_DENIED: the program was not run (no tool was called): line 2 calls store.wipe, which the configuration denies (backends.store.tools.deny)"
			if !isErr || !strings.HasPrefix(text, want) {
				t.Fatalf("got (error %v):\n%s\nwant %s", isErr, text, want)
			}
			if calls := store.got(); len(calls) != 0 {
				t.Fatalf("the backend received %v; want no call", calls)
			}
			rec := runRecord(t, cs, res)
			// The plan names the denied tool as denied, by its rule; the
			// checker's "not a tool of store" for it is not kept (issue 43).
			if rec.Plan == nil || len(rec.Plan.Tools) != 2 || rec.Plan.Tools[1].Tool != "wipe" || rec.Plan.Tools[1].Unknown ||
				rec.Plan.Tools[1].DeniedBy != "backends.store.tools.deny" || rec.Error == nil || rec.Error.Code != "PLAN_DENIED" {
				t.Fatalf("record: plan %+v, error %+v", rec.Plan, rec.Error)
			}
			if len(rec.Diagnostics) != 0 {
				t.Fatalf("recorded diagnostics: %+v", rec.Diagnostics)
			}
		})
	}
	t.Run("off", func(t *testing.T) {
		g, store := planGateway(t, "off", false)
		text, _, res := callText(t, connect(t, g, nil), "call_tool_chain", map[string]any{"code": program})
		if text != "done" || strings.Join(store.got(), ",") != "read:r1" {
			t.Fatalf("got %q, calls %v", text, store.got())
		}
		if res.Meta["isogate/run"] == nil {
			t.Fatal("no run id")
		}
	})
}

// counting is a client's elicitation handler that counts the prompts and
// answers each with action.
type counting struct {
	mu       sync.Mutex
	messages []string
	action   string
}

func (c *counting) handler(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.messages = append(c.messages, req.Params.Message)
	return &mcp.ElicitResult{Action: c.action}, nil
}

func (c *counting) prompts() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.messages...)
}

// With sandbox.plan_approval, a program of 20 writes to a tool under
// approval asks once, listing the tool and that it is called in a loop,
// and the backend receives the 20 calls; a declined plan runs nothing.
// Through a go-sdk client on the latest protocol (multi round-trip) and
// on 2025-11-25 (a server-to-client request).
func TestPlanApprovalOnePromptForTwentyWrites(t *testing.T) {
	const program = "await store.read({id:'first'});\nfor (let i = 0; i < 20; i++) {\n  await store.write({id: 'w' + i});\n}\nreturn 'wrote 20'"
	for _, version := range []string{"", "2025-11-25"} {
		name := version
		if name == "" {
			name = "latest"
		}
		t.Run(name, func(t *testing.T) {
			var versions []string
			if version != "" {
				versions = []string{version}
			}
			g, store := planGateway(t, "warn", true)
			el := &counting{action: "accept"}
			cs := connect(t, g, &mcp.ClientOptions{ElicitationHandler: el.handler}, versions...)
			text, isErr, res := callText(t, cs, "call_tool_chain", map[string]any{"code": program})
			if isErr || text != "wrote 20" {
				t.Fatalf("got (error %v) %s", isErr, text)
			}
			prompts := el.prompts()
			if len(prompts) != 1 || !strings.Contains(prompts[0], "- store.write (line 3; in a loop: yes)") {
				t.Fatalf("%d prompts, want 1 listing store.write in a loop: %q", len(prompts), prompts)
			}
			calls := store.got()
			if len(calls) != 21 || calls[0] != "read:first" || calls[20] != "write:w19" {
				t.Fatalf("the backend received %d calls: %v", len(calls), calls)
			}
			rec := runRecord(t, cs, res)
			if rec.Plan == nil || fmt.Sprint(rec.Plan.Tools) != "[{store read no [1] 1 false } {store write yes [3] 0 false }]" {
				t.Fatalf("recorded plan: %+v", rec.Plan)
			}

			el.action = "decline"
			text, isErr, _ = callText(t, cs, "call_tool_chain", map[string]any{"code": program})
			if !isErr || !strings.HasPrefix(text, "APPROVAL_DENIED: the program was not run (no tool was called)") {
				t.Fatalf("declined plan: (error %v) %s", isErr, text)
			}
			if n := len(store.got()); n != 21 {
				t.Fatalf("a declined plan made %d calls", n-21)
			}
		})
	}
}

// tool_info says that programs are checked against the signature it
// shows when sandbox.typecheck is on, and nothing when it is off.
func TestToolInfoSaysProgramsAreChecked(t *testing.T) {
	for mode, want := range map[string]string{"strict": "(sandbox.typecheck: strict)", "warn": "(sandbox.typecheck: warn)", "off": ""} {
		t.Run(mode, func(t *testing.T) {
			g, _ := planGateway(t, mode, false)
			text, isErr, _ := callText(t, connect(t, g, nil), "tool_info", map[string]any{"tool_name": "store.read"})
			if isErr || strings.Contains(text, "type-checked") != (want != "") || !strings.Contains(text, want) {
				t.Fatalf("tool_info (error %v):\n%s\nwant %q", isErr, text, want)
			}
		})
	}
}
