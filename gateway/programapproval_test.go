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
