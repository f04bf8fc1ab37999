package gateway

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestPassthroughCompletion: completion/complete reaches the backend that
// owns the prompt (under its original name) or the resource template; a
// backend without completions answers empty, an unknown prompt is invalid
// params, and isogate://backend/{name} completes backend names.
func TestPassthroughCompletion(t *testing.T) {
	g, f := fwdGateway(t)
	ctx := context.Background()
	changed := make(chan struct{}, 16)
	cs := connect(t, g, &mcp.ClientOptions{PromptListChangedHandler: func(context.Context, *mcp.PromptListChangedRequest) {
		changed <- struct{}{}
	}})
	if ir := cs.InitializeResult(); ir.Capabilities.Completions == nil {
		t.Fatal("the gateway does not announce completions")
	}
	deadline := time.After(eventWait)
	for {
		res, err := cs.ListPrompts(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, p := range res.Prompts {
			names = append(names, p.Name)
		}
		if slices.Contains(names, "greet") && slices.Contains(names, "hello") {
			break
		}
		select {
		case <-changed:
		case <-deadline:
			t.Fatalf("prompts listed: %v", names)
		}
	}

	complete := func(ref *mcp.CompleteReference, arg, value string) (*mcp.CompleteResult, error) {
		return cs.Complete(ctx, &mcp.CompleteParams{Ref: ref, Argument: mcp.CompleteParamsArgument{Name: arg, Value: value}})
	}
	res, err := complete(&mcp.CompleteReference{Type: "ref/prompt", Name: "greet"}, "name", "al")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(res.Completion.Values, []string{"alice", "albert"}) {
		t.Errorf("prompt completion: %v", res.Completion.Values)
	}
	res, err = complete(&mcp.CompleteReference{Type: "ref/resource", URI: "fwd://items/{id}"}, "id", "1")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(res.Completion.Values, []string{"1", "10"}) {
		t.Errorf("template completion: %v", res.Completion.Values)
	}
	f.mu.Lock()
	refs := slices.Clone(f.refs)
	f.mu.Unlock()
	if len(refs) != 2 || refs[0].Name != "greet" || refs[1].URI != "fwd://items/{id}" {
		t.Errorf("the backend was asked about %+v %+v", refs[0], refs[1])
	}

	res, err = complete(&mcp.CompleteReference{Type: "ref/prompt", Name: "hello"}, "x", "")
	if err != nil || res.Completion.Values == nil || len(res.Completion.Values) != 0 {
		t.Errorf("a backend without completions: %+v, %v", res, err)
	}
	_, err = complete(&mcp.CompleteReference{Type: "ref/prompt", Name: "nope"}, "name", "")
	var rpc *jsonrpc.Error
	if !errors.As(err, &rpc) || rpc.Code != jsonrpc.CodeInvalidParams {
		t.Errorf("an unknown prompt: %v, want invalid params", err)
	}
	res, err = complete(&mcp.CompleteReference{Type: "ref/resource", URI: "isogate://backend/{name}"}, "name", "f")
	if err != nil || !slices.Equal(res.Completion.Values, []string{"fwd"}) {
		t.Errorf("isogate://backend/{name}: %+v, %v", res, err)
	}
}
