package backend

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// fakeClientRequests answers every request with a fixed result.
type fakeClientRequests struct{}

func (fakeClientRequests) CreateMessage(_ context.Context, backend string, p *mcp.CreateMessageWithToolsParams) (*mcp.CreateMessageWithToolsResult, error) {
	return &mcp.CreateMessageWithToolsResult{Model: backend, Role: "assistant", Content: []mcp.Content{&mcp.TextContent{Text: "sampled"}}}, nil
}

func (fakeClientRequests) Elicit(_ context.Context, backend string, p *mcp.ElicitParams) (*mcp.ElicitResult, error) {
	return &mcp.ElicitResult{Action: "decline"}, nil
}

func (fakeClientRequests) ListRoots(_ context.Context, backend string, p *mcp.ListRootsParams) (*mcp.ListRootsResult, error) {
	return &mcp.ListRootsResult{Roots: []*mcp.Root{{URI: "file:///" + backend}}}, nil
}

func (fakeClientRequests) ElicitationComplete(string, *mcp.ElicitationCompleteParams) {}

// TestClientRequestsDeclared: with Options.ClientRequests a backend sees a
// client with sampling, elicitation (form, url) and roots, and a backend
// on 2025-11-25 (Spec.ProtocolVersion) gets its requests during a call to
// ClientRequests; without it, the newest version and no client
// capabilities.
func TestClientRequestsDeclared(t *testing.T) {
	for _, routed := range []bool{true, false} {
		srv := mcp.NewServer(&mcp.Implementation{Name: "asker"}, nil)
		mcp.AddTool(srv, &mcp.Tool{Name: "ask"}, func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
			ip := req.Session.InitializeParams()
			caps, _ := json.Marshal(ip.Capabilities)
			out := ip.ProtocolVersion + " " + string(caps)
			if routed {
				roots, err := req.Session.ListRoots(ctx, nil)
				if err != nil {
					return nil, nil, err
				}
				el, err := req.Session.Elicit(ctx, &mcp.ElicitParams{Message: "?", RequestedSchema: map[string]any{"type": "object"}})
				if err != nil {
					return nil, nil, err
				}
				sm, err := req.Session.CreateMessage(ctx, &mcp.CreateMessageParams{MaxTokens: 1, Messages: []*mcp.SamplingMessage{}})
				if err != nil {
					return nil, nil, err
				}
				out += " " + roots.Roots[0].URI + " " + el.Action + " " + sm.Model
			}
			return textResult(out), nil, nil
		})
		spec := inProcess("asker", srv)
		if routed {
			spec.ProtocolVersion = "2025-11-25" // a server that sends requests mid-call
		}
		opts := Options{Specs: []Spec{spec}}
		if routed {
			opts.ClientRequests = fakeClientRequests{}
		}
		m := startManager(t, opts)
		waitHealthy(t, m)
		res, err := m.Call(context.Background(), "asker", &mcp.CallToolParams{Name: "ask"})
		if err != nil {
			t.Fatal(err)
		}
		want := `2026-07-28 {"roots":{}}` // the go-sdk's Roots field is a struct: always marshalled
		if routed {
			want = `2025-11-25 {"roots":{},"sampling":{"tools":{}},"elicitation":{"form":{},"url":{}}} file:///asker decline asker`
		}
		if got := resultText(t, res); got != want {
			t.Errorf("routed=%v: the backend saw %q, want %q", routed, got, want)
		}
	}
}
