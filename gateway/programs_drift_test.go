package gateway

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/isogate/isogate/config"
	"github.com/isogate/isogate/internal/backend"
	"github.com/isogate/isogate/internal/testutil"
)

// driftingShop is an in-process backend whose refund tool's input schema
// the test changes; the SDK sends tools/list_changed to the gateway.
type driftingShop struct{ server *mcp.Server }

var (
	refundByID    = json.RawMessage(`{"type":"object","properties":{"id":{"type":"number"}},"required":["id"]}`)
	refundByOrder = json.RawMessage(`{"type":"object","properties":{"order_id":{"type":"string"}},"required":["order_id"]}`)
)

func newDriftingShop() *driftingShop {
	s := &driftingShop{server: mcp.NewServer(&mcp.Implementation{Name: "shop"}, nil)}
	s.refundTakes(refundByID)
	return s
}

// refundTakes (re)defines shop.refund with schema.
func (s *driftingShop) refundTakes(schema json.RawMessage) {
	s.server.AddTool(&mcp.Tool{Name: "refund", Description: "Refunds an order.", InputSchema: schema},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "refunded " + string(req.Params.Arguments)}}}, nil
		})
}

// TestSavedProgramGoesStaleWhenItsBackendChanges: alice's program calls
// shop.refund({ id }); the shop's refund comes to take { order_id }: the
// program is marked stale without anyone calling it, a call of it gives
// PROGRAM_STALE with the checker's diagnostic, /readyz names it (and
// stays ready) and isogate_programs_stale counts it; a program that calls
// only local.echo is untouched. The schema back, the program is called
// again.
func TestSavedProgramGoesStaleWhenItsBackendChanges(t *testing.T) {
	shop := newDriftingShop()
	h := newHTTPGateway(t, func(c *config.Config) {
		c.Store.DataDir = t.TempDir()
		c.Server.Auth.Mode = config.AuthToken
		c.Server.Auth.Tokens = programTokens
		c.Server.Auth.Admins = []string{"root"}
		c.Sandbox.Typecheck = "off" // saving and drift check as strict whatever the mode
	}, backend.InMemory("shop", shop.server))
	alice := h.connectProgram(t, "alice", nil)
	for name, code := range map[string]string{
		"refund_one": `return await shop.refund({ id: args.id })`,
		"echo_once":  `return await local.echo({ x: args.x })`,
	} {
		if text, isErr, code := callProgramTool(t, alice, "save_program", map[string]any{"name": name, "description": "d", "code": code}); isErr {
			t.Fatalf("save %s: %s (%s)", name, text, code)
		}
	}
	if text, isErr, _ := callProgramTool(t, alice, "program_refund_one", map[string]any{"id": 7}); isErr || !strings.Contains(text, "refunded") {
		t.Fatalf("before the change: %s", text)
	}

	shop.refundTakes(refundByOrder)
	var text, code string
	testutil.Eventually(t, time.Minute, func() bool {
		text, _, code = callProgramTool(t, alice, "program_refund_one", map[string]any{"id": 7})
		return code == "PROGRAM_STALE"
	}, "a call of the program to give PROGRAM_STALE after shop.refund's schema changed")
	if !strings.Contains(text, "refund_one@1") || !strings.Contains(text, "order_id") || !strings.Contains(text, "TYPECHECK_FAILED") {
		t.Errorf("the refusal does not carry the diagnostics: %s", text)
	}
	if text, isErr, _ := callProgramTool(t, alice, "program_echo_once", map[string]any{"x": "hi"}); isErr {
		t.Errorf("a program that does not call shop is refused: %s", text)
	}
	status, body := h.get(t, "/readyz")
	if status != http.StatusOK || !strings.Contains(body, `"program":"alice/refund_one@1"`) || strings.Contains(body, "echo_once") {
		t.Errorf("/readyz: %d %s", status, body)
	}
	waitForSample(t, h, "isogate_programs_stale", 1)
	if _, text := h.get(t, "/metrics"); !hasSample(text, "isogate_programs_saved", 2) {
		t.Errorf("isogate_programs_saved is not 2")
	}

	shop.refundTakes(refundByID)
	testutil.Eventually(t, time.Minute, func() bool {
		text, _, code = callProgramTool(t, alice, "program_refund_one", map[string]any{"id": 8})
		return code != "PROGRAM_STALE"
	}, "the program to be called again once shop.refund's schema came back")
	if !strings.Contains(text, "refunded") {
		t.Fatalf("after the schema came back: %s (%s)", text, code)
	}
	if _, body := h.get(t, "/readyz"); strings.Contains(body, "refund_one") {
		t.Errorf("/readyz still names the program: %s", body)
	}
}
