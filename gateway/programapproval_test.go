package gateway

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/isogate/isogate/config"
)

// TestSavedProgramsUnderApproval (issue 45): server.auth.rules approve
// naming programs.pay_* puts alice's pay_once under approval (not bob's
// calls of it, published to him): a direct call and a run naming it ask
// her client once before anything runs, naming the program (and the
// direct call's arguments); declined, the run is refused with
// APPROVAL_DENIED and the backend never called; a client that cannot be
// asked gets APPROVAL_REQUIRED; accepted, it runs. Red without the gate:
// the program ran with nobody asked.
func TestSavedProgramsUnderApproval(t *testing.T) {
	h := newHTTPGateway(t, func(c *config.Config) {
		c.Store.DataDir = t.TempDir()
		c.Server.Auth.Mode = config.AuthToken
		c.Server.Auth.Tokens = programTokens
		c.Server.Auth.Admins = []string{"root"}
		c.Server.Auth.Rules = map[string]config.AccessRule{
			"alice-pays-with-approval": {Principals: []string{"alice"}, Approve: []string{"programs.pay_*"}},
		}
		c.Backends = map[string]config.Backend{}
	})
	var mu sync.Mutex
	var asked []string
	answer := "decline"
	as := func(who string, elicits bool) *mcp.ClientSession {
		opts := &mcp.ClientOptions{}
		if elicits {
			opts.ElicitationHandler = func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
				mu.Lock()
				defer mu.Unlock()
				asked = append(asked, req.Params.Message)
				return &mcp.ElicitResult{Action: answer}, nil
			}
		}
		cs, err := mcp.NewClient(&mcp.Implementation{Name: who}, opts).Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: h.url,
			HTTPClient: &http.Client{Transport: bearer{programTokens[who].Token}}}, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cs.Close() })
		return cs
	}
	alice := as("alice", true)
	if text, isErr, _ := callProgramTool(t, alice, "save_program", map[string]any{"name": "pay_once", "description": "Pays once.",
		"code": `return await local.echo({ paid: args.amount })`}); isErr {
		t.Fatalf("save: %s", text)
	}
	takeAsked := func() []string {
		mu.Lock()
		defer mu.Unlock()
		out := asked
		asked = nil
		return out
	}

	text, isErr, code := callProgramTool(t, alice, "program_pay_once", map[string]any{"amount": 7})
	if q := takeAsked(); !isErr || code != "APPROVAL_DENIED" || strings.Contains(text, "paid") || len(q) != 1 ||
		!strings.Contains(q[0], `"pay_once" of the backend "programs"`) || !strings.Contains(q[0], `{"amount":7}`) {
		t.Fatalf("declined direct call: %s (%s); asked %q", text, code, q)
	}
	text, isErr, code = callProgramTool(t, alice, "call_tool_chain", map[string]any{"code": `await programs.pay_once({ amount: 1 }); return await programs.pay_once({ amount: 2 })`})
	if q := takeAsked(); !isErr || code != "APPROVAL_DENIED" || len(q) != 1 {
		t.Fatalf("declined run: %s (%s); asked %q", text, code, q)
	}
	if text, isErr, code = callProgramTool(t, as("alice", false), "program_pay_once", map[string]any{"amount": 7}); !isErr || code != "APPROVAL_REQUIRED" {
		t.Fatalf("a client that cannot be asked: %s (%s)", text, code)
	}
	mu.Lock()
	answer = "accept"
	mu.Unlock()
	text, isErr, code = callProgramTool(t, alice, "call_tool_chain", map[string]any{"code": `await programs.pay_once({ amount: 1 }); return await programs.pay_once({ amount: 2 })`})
	if q := takeAsked(); isErr || !strings.Contains(text, `"paid": 2`) || len(q) != 1 {
		t.Fatalf("accepted run: %s (%s); asked %q", text, code, q)
	}

	root := as("root", false)
	if text, isErr, _ = callProgramTool(t, root, "programs", map[string]any{"action": "publish", "owner": "alice", "name": "pay_once", "to": []string{"bob"}}); isErr {
		t.Fatalf("publish: %s", text)
	}
	if text, isErr, code = callProgramTool(t, as("bob", false), "program_pay_once", map[string]any{"amount": 3}); isErr || !strings.Contains(text, `"paid": 3`) {
		t.Fatalf("bob, whose rules do not ask: %s (%s)", text, code)
	}
}

// TestPlanApprovedAtSave (issue 45, server.auth.approval_at_save): alice's
// rules put local.echo under approval. With the key on, saving a program
// that calls it asks her to approve its plan once, and her later direct
// calls of that version ask nothing; her own run calling local.echo, a
// run calling the program as programs.echo_prog, bob's call of the
// version published to him, and a version whose plan she declined at save
// all ask at the call. With the key off nothing is asked at save and
// every call asks. Red with the approval not applied to the direct call
// (it asked again).
func TestPlanApprovedAtSave(t *testing.T) {
	for _, on := range []bool{true, false} {
		h := newHTTPGateway(t, func(c *config.Config) {
			c.Store.DataDir = t.TempDir()
			c.Server.Auth.Mode = config.AuthToken
			c.Server.Auth.Tokens = programTokens
			c.Server.Auth.Admins = []string{"root"}
			c.Server.Auth.ApprovalAtSave = on
			c.Server.Auth.Rules = map[string]config.AccessRule{
				"echo-asks": {Principals: []string{"alice", "bob"}, Approve: []string{"local.echo"}},
			}
			c.Backends = map[string]config.Backend{}
		})
		var mu sync.Mutex
		var asked []string
		answer := "accept"
		as := func(who string) *mcp.ClientSession {
			cs, err := mcp.NewClient(&mcp.Implementation{Name: who}, &mcp.ClientOptions{
				ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
					mu.Lock()
					defer mu.Unlock()
					asked = append(asked, who+": "+req.Params.Message)
					return &mcp.ElicitResult{Action: answer}, nil
				}}).Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: h.url,
				HTTPClient: &http.Client{Transport: bearer{programTokens[who].Token}}}, nil)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { cs.Close() })
			return cs
		}
		took := func() int {
			mu.Lock()
			defer mu.Unlock()
			n := len(asked)
			asked = nil
			return n
		}
		call := func(cs *mcp.ClientSession, tool string, args map[string]any, wantAsked int, what string) {
			t.Helper()
			text, isErr, code := callProgramTool(t, cs, tool, args)
			if isErr {
				t.Fatalf("on=%v %s: %s (%s)", on, what, text, code)
			}
			if n := took(); n != wantAsked {
				t.Errorf("on=%v %s: asked %d times, want %d", on, what, n, wantAsked)
			}
		}
		alice := as("alice")
		saveAsks := 0
		if on {
			saveAsks = 1
		}
		call(alice, "save_program", map[string]any{"name": "echo_prog", "description": "Echoes x.", "code": `return await local.echo({ x: args.x })`}, saveAsks, "save")
		callAsks := 1
		if on {
			callAsks = 0
		}
		call(alice, "program_echo_prog", map[string]any{"x": 1}, callAsks, "her direct call")
		call(alice, "program_echo_prog", map[string]any{"x": 2}, callAsks, "her second direct call")
		call(alice, "call_tool_chain", map[string]any{"code": `return await local.echo({ x: 3 })`}, 1, "her own run")
		call(alice, "call_tool_chain", map[string]any{"code": `return await programs.echo_prog({ x: 4 })`}, 1, "a run calling the program")
		call(as("root"), "programs", map[string]any{"action": "publish", "owner": "alice", "name": "echo_prog", "to": []string{"bob"}}, 0, "publish")
		call(as("bob"), "program_echo_prog", map[string]any{"x": 5}, 1, "bob's call")
		if on {
			mu.Lock()
			answer = "decline"
			mu.Unlock()
			call(alice, "save_program", map[string]any{"name": "echo_prog", "description": "Echoes x, v2.", "code": `return await local.echo({ x: args.x, v: 2 })`}, 1, "save v2, declined")
			mu.Lock()
			answer = "accept"
			mu.Unlock()
			call(alice, "program_echo_prog", map[string]any{"x": 6}, 1, "her call of v2")
		}
	}
}
