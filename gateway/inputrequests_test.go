package gateway

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/isogate/isogate/config"
	"github.com/isogate/isogate/internal/app"
	"github.com/isogate/isogate/internal/backend"
	"github.com/isogate/isogate/internal/pipeline"
)

// mrtrBackend is an in-process go-sdk server whose tool and prompt need
// input from the client (SEP-2322): each answers its first two rounds with
// an InputRequiredResult and completes on the third, and it records every
// requestState it received.
type mrtrBackend struct {
	server *mcp.Server

	mu     sync.Mutex
	states []string // requestState of every round, "" for a first call
}

// mrtrState is the backend's requestState after round n: opaque to
// everyone but the backend, and deliberately not isogate-shaped.
func mrtrState(n int) string { return fmt.Sprintf("backend-opaque.%d.c2lnbmVk", n) }

func nameRequest() *mcp.ElicitParams {
	return &mcp.ElicitParams{Message: "What is your name?", RequestedSchema: &jsonschema.Schema{
		Type: "object", Properties: map[string]*jsonschema.Schema{"name": {Type: "string"}}, Required: []string{"name"}}}
}

// round tells which round a retry is (0: a first call) and checks its state.
func (b *mrtrBackend) round(state string, responses mcp.InputResponseMap) (int, error) {
	b.mu.Lock()
	b.states = append(b.states, state)
	b.mu.Unlock()
	for n := 1; n <= 2; n++ {
		if state == mrtrState(n) {
			if _, ok := responses[fmt.Sprintf("q%d", n)]; !ok {
				return 0, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("round %d: no response to q%d", n, n)}
			}
			return n, nil
		}
	}
	if state != "" {
		return 0, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "invalid requestState: tampered"}
	}
	return 0, nil
}

func newMRTRBackend() *mrtrBackend {
	b := &mrtrBackend{}
	b.server = mcp.NewServer(&mcp.Implementation{Name: "mrtr"}, nil)
	mcp.AddTool(b.server, &mcp.Tool{Name: "ask", Description: "Asks for a name twice, then greets."},
		func(_ context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
			n, err := b.round(req.Params.RequestState, req.Params.InputResponses)
			if err != nil {
				return nil, nil, err
			}
			if n < 2 {
				return &mcp.CallToolResult{
					InputRequests: mcp.InputRequestMap{fmt.Sprintf("q%d", n+1): nameRequest()},
					RequestState:  mrtrState(n + 1),
				}, nil, nil
			}
			r, _ := req.Params.InputResponses["q2"].(*mcp.ElicitResult)
			if r == nil || r.Action != "accept" {
				return textResult("declined", false), nil, nil
			}
			return textResult(fmt.Sprintf("hello %v", r.Content["name"]), false), nil, nil
		})
	mcp.AddTool(b.server, &mcp.Tool{Name: "sample", Description: "Needs the sampling capability."},
		func(_ context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
			if caps := req.ClientCapabilities(); caps != nil && caps.Sampling != nil {
				return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{"s": &mcp.CreateMessageParams{
					Messages: []*mcp.SamplingMessage{{Role: "user", Content: &mcp.TextContent{Text: "hi"}}}, MaxTokens: 5}}}, nil, nil
			}
			return nil, nil, &jsonrpc.Error{Code: mcp.CodeMissingRequiredClientCapabilities, Message: "sampling capability required"}
		})
	b.server.AddPrompt(&mcp.Prompt{Name: "ask_prompt"}, func(_ context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		n, err := b.round(req.Params.RequestState, req.Params.InputResponses)
		if err != nil {
			return nil, err
		}
		if n < 2 {
			return &mcp.GetPromptResult{
				InputRequests: mcp.InputRequestMap{fmt.Sprintf("q%d", n+1): nameRequest()},
				RequestState:  mrtrState(n + 1),
			}, nil
		}
		return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: "prompt done"}}}}, nil
	})
	return b
}

func (b *mrtrBackend) seen() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]string(nil), b.states...)
}

func mrtrGateway(t *testing.T) (*Gateway, *mrtrBackend) {
	t.Helper()
	cfg := config.Default()
	cfg.Server.CacheDir = t.TempDir()
	cfg.Server.Expose = config.ExposePassthrough
	cfg.Server.ToolNames = config.ToolNamesBare
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	b := newMRTRBackend()
	g := startHealthy(t, cfg, app.Options{Runner: testPool(), ExtraSpecs: []backend.Spec{backend.InMemory("mrtr", b.server)}})
	return g, b
}

// mrtrClient is a 2026-07-28 client that declares elicitation and answers
// input requests itself (automatic multi round-trip disabled).
func mrtrClient(t *testing.T, g *Gateway) *mcp.ClientSession {
	return connect(t, g, &mcp.ClientOptions{
		MultiRoundTrip: &mcp.MultiRoundTripOptions{Disabled: true},
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return nil, errors.New("input requests come in results, not as requests")
		},
	}, "2026-07-28")
}

func accept(name string) *mcp.ElicitResult {
	return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": name}}
}

// TestPassthroughInputRequiredRoundTrips: a backend tool's
// InputRequiredResult reaches a 2026-07-28 client unchanged, round after
// round, and each retry's inputResponses and untouched requestState reach
// the backend, which completes.
func TestPassthroughInputRequiredRoundTrips(t *testing.T) {
	g, b := mrtrGateway(t)
	cs := mrtrClient(t, g)
	ctx := context.Background()

	params := &mcp.CallToolParams{Name: "ask", Arguments: map[string]any{}}
	for n := 1; n <= 2; n++ {
		res, err := cs.CallTool(ctx, params)
		if err != nil {
			t.Fatalf("round %d: %v", n, err)
		}
		id := fmt.Sprintf("q%d", n)
		if !res.NeedsInput() || res.RequestState != mrtrState(n) || len(res.InputRequests) != 1 || res.InputRequests[id] == nil {
			t.Fatalf("round %d: want the backend's input request %s with state %q, got %+v", n, id, mrtrState(n), res)
		}
		if ep, _ := res.InputRequests[id].(*mcp.ElicitParams); ep == nil || ep.Message != "What is your name?" {
			t.Fatalf("round %d: input request changed on the way: %#v", n, res.InputRequests[id])
		}
		params = &mcp.CallToolParams{Name: "ask", Arguments: map[string]any{},
			InputResponses: mcp.InputResponseMap{id: accept("ada")}, RequestState: res.RequestState}
	}
	res, err := cs.CallTool(ctx, params)
	if err != nil {
		t.Fatal(err)
	}
	if res.NeedsInput() || res.IsError || len(res.Content) != 1 || res.Content[0].(*mcp.TextContent).Text != "hello ada" {
		t.Fatalf("final round: %+v", res)
	}
	if got, want := fmt.Sprint(b.seen()), fmt.Sprint([]string{"", mrtrState(1), mrtrState(2)}); got != want {
		t.Errorf("backend saw requestStates %s, want %s", got, want)
	}

	// A tampered state reaches the backend, whose refusal reaches the client.
	_, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "ask", Arguments: map[string]any{},
		InputResponses: mcp.InputResponseMap{"q1": accept("ada")}, RequestState: mrtrState(1) + "-TAMPERED"})
	var rpc *jsonrpc.Error
	if !errors.As(err, &rpc) || rpc.Code != jsonrpc.CodeInvalidParams {
		t.Fatalf("tampered requestState: want the backend's -32602, got %v", err)
	}
}

// TestPassthroughInputRequiredPrompt: prompts/get round-trips the same way.
func TestPassthroughInputRequiredPrompt(t *testing.T) {
	g, b := mrtrGateway(t)
	cs := mrtrClient(t, g)
	ctx := context.Background()
	waitForPrompt(t, cs, "ask_prompt")
	params := &mcp.GetPromptParams{Name: "ask_prompt"}
	for n := 1; n <= 2; n++ {
		res, err := cs.GetPrompt(ctx, params)
		if err != nil {
			t.Fatalf("round %d: %v", n, err)
		}
		id := fmt.Sprintf("q%d", n)
		if !res.NeedsInput() || res.RequestState != mrtrState(n) || res.InputRequests[id] == nil {
			t.Fatalf("round %d: want input request %s with state %q, got %+v", n, id, mrtrState(n), res)
		}
		params = &mcp.GetPromptParams{Name: "ask_prompt", InputResponses: mcp.InputResponseMap{id: accept("ada")}, RequestState: res.RequestState}
	}
	res, err := cs.GetPrompt(ctx, params)
	if err != nil {
		t.Fatal(err)
	}
	if res.NeedsInput() || len(res.Messages) != 1 {
		t.Fatalf("final round: %+v", res)
	}
	if got, want := fmt.Sprint(b.seen()), fmt.Sprint([]string{"", mrtrState(1), mrtrState(2)}); got != want {
		t.Errorf("backend saw requestStates %s, want %s", got, want)
	}
}

// TestPassthroughClientCapabilitiesReachBackend: the backend sees the
// client's per-request capabilities, not the gateway's: without sampling
// its refusal (-32021) reaches the client as a JSON-RPC error; with it,
// the sampling request comes back.
func TestPassthroughClientCapabilitiesReachBackend(t *testing.T) {
	g, _ := mrtrGateway(t)
	ctx := context.Background()
	_, err := mrtrClient(t, g).CallTool(ctx, &mcp.CallToolParams{Name: "sample", Arguments: map[string]any{}})
	var rpc *jsonrpc.Error
	if !errors.As(err, &rpc) || rpc.Code != mcp.CodeMissingRequiredClientCapabilities {
		t.Fatalf("client without sampling: want -32021, got %v", err)
	}
	sampler := connect(t, g, &mcp.ClientOptions{
		MultiRoundTrip: &mcp.MultiRoundTripOptions{Disabled: true},
		CreateMessageHandler: func(context.Context, *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			return nil, errors.New("not asked directly")
		},
	}, "2026-07-28")
	res, err := sampler.CallTool(ctx, &mcp.CallToolParams{Name: "sample", Arguments: map[string]any{}})
	if err != nil {
		t.Fatal(err)
	}
	switch res.InputRequests["s"].(type) {
	case *mcp.CreateMessageParams, *mcp.CreateMessageWithToolsParams:
	default:
		t.Fatalf("client with sampling: want the sampling input request, got %+v", res)
	}
}

// TestPassthroughInputRequiredUnderApproval: a tool under approve asks the
// person first (isogate's own round); the approved call's backend rounds
// then continue without asking again, the backend's requestState untouched,
// and a requestState the backend never issued does not skip the approval.
func TestPassthroughInputRequiredUnderApproval(t *testing.T) {
	g, b := mrtrGateway(t)
	g.app.Policy.Replace(pipeline.NewPolicy(map[string]config.Backend{"mrtr": {Tools: config.ToolPolicy{Approve: []string{"ask"}}}}))
	cs := mrtrClient(t, g)
	ctx := context.Background()

	// An invented state: refused before the backend sees anything.
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "ask", Arguments: map[string]any{},
		InputResponses: mcp.InputResponseMap{"q1": accept("eve")}, RequestState: mrtrState(1)})
	if err != nil || !res.IsError {
		t.Fatalf("invented requestState: want an error result, got %+v, %v", res, err)
	}
	if len(b.seen()) != 0 {
		t.Fatalf("the backend was called without approval: %v", b.seen())
	}

	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "ask", Arguments: map[string]any{}})
	if err != nil {
		t.Fatal(err)
	}
	if res.InputRequests["approval"] == nil || res.RequestState == "" {
		t.Fatalf("want isogate's approval request, got %+v", res)
	}
	params := &mcp.CallToolParams{Name: "ask", Arguments: map[string]any{},
		InputResponses: mcp.InputResponseMap{"approval": &mcp.ElicitResult{Action: "accept"}}, RequestState: res.RequestState}
	for n := 1; n <= 2; n++ {
		res, err := cs.CallTool(ctx, params)
		if err != nil {
			t.Fatalf("round %d: %v", n, err)
		}
		id := fmt.Sprintf("q%d", n)
		if res.RequestState != mrtrState(n) || res.InputRequests[id] == nil {
			t.Fatalf("round %d: want the backend's input request %s with state %q, got %+v", n, id, mrtrState(n), res)
		}
		params = &mcp.CallToolParams{Name: "ask", Arguments: map[string]any{},
			InputResponses: mcp.InputResponseMap{id: accept("ada")}, RequestState: res.RequestState}
	}
	res, err = cs.CallTool(ctx, params)
	if err != nil || res.IsError || res.Content[0].(*mcp.TextContent).Text != "hello ada" {
		t.Fatalf("final round: %+v, %v", res, err)
	}
	// isogate's approval state and response never reached the backend.
	if got, want := fmt.Sprint(b.seen()), fmt.Sprint([]string{"", mrtrState(1), mrtrState(2)}); got != want {
		t.Errorf("backend saw requestStates %s, want %s", got, want)
	}
	// A backend state is good for one retry only.
	res, err = cs.CallTool(ctx, params)
	if err != nil || !res.IsError {
		t.Fatalf("replayed backend requestState: want an error result, got %+v, %v", res, err)
	}
}

// waitForPrompt waits until the gateway lists name (backend prompts are
// fetched after the backend connects).
func waitForPrompt(t *testing.T, cs *mcp.ClientSession, name string) {
	t.Helper()
	deadline := time.Now().Add(eventWait)
	for {
		for p, err := range cs.Prompts(context.Background(), nil) {
			if err == nil && p.Name == name {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("prompt %q never listed", name)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
