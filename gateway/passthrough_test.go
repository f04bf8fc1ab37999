package gateway

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/isogate/isogate/config"
	"github.com/isogate/isogate/internal/app"
	"github.com/isogate/isogate/internal/backend"
	"github.com/isogate/isogate/internal/pipeline"
	"github.com/isogate/isogate/v8sandbox"
)

// surfaceGateway is a gateway over the real server-everything (with
// get-env denied) and an in-process backend "dyn" whose tools the test
// changes, exposing expose, with tools and prompts named
// <backend>__<name> (server.tool_names prefixed; TestPassthroughToolNames
// covers the other modes).
func surfaceGateway(t *testing.T, expose config.Expose, mutate func(*config.Config)) (*Gateway, *mcp.Server) {
	t.Helper()
	cfg := config.Default()
	cfg.Server.CacheDir = t.TempDir()
	cfg.Server.Expose = expose
	cfg.Server.ToolNames = config.ToolNamesPrefixed
	cfg.Sandbox.Timeout = 10 * time.Second
	cfg.Sandbox.Isolation, cfg.Sandbox.TrustedCode = config.IsolationThread, true
	cfg.Backends = map[string]config.Backend{"everything": {
		Name: "everything", Transport: config.TransportStdio, Command: "node",
		Args: []string{everythingPath(t), "stdio"}, Timeout: 10 * time.Second, MaxConcurrentCalls: 8,
		Tools: config.ToolPolicy{Deny: []string{"get-env"}},
	}}
	if mutate != nil {
		mutate(cfg)
	}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	dyn := mcp.NewServer(&mcp.Implementation{Name: "dyn"}, nil)
	mcp.AddTool(dyn, &mcp.Tool{Name: "first", Description: "The first tool."},
		func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
			return textResult("first", false), nil, nil
		})
	// A prompt from the start, so that dyn announces prompts (with
	// listChanged) and its clients follow prompt list changes.
	dyn.AddPrompt(&mcp.Prompt{Name: "hello"}, func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: "hello"}}}}, nil
	})
	g := startHealthy(t, cfg, app.Options{Runner: testPool(), ExtraSpecs: []backend.Spec{backend.InMemory("dyn", dyn)}})
	return g, dyn
}

func toolNames(t *testing.T, cs *mcp.ClientSession) []string {
	t.Helper()
	var names []string
	for tool, err := range cs.Tools(context.Background(), nil) {
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, tool.Name)
	}
	return names
}

// TestPassthroughBoth: with server.expose both a real MCP client sees the
// meta-tools and every allowed server-everything tool as everything__<tool>;
// a passthrough call returns exactly what the backend returns, a denied tool
// is neither listed nor callable, and adding and removing a backend tool
// reaches the client as notifications/tools/list_changed.
func TestPassthroughBoth(t *testing.T) {
	g, dyn := surfaceGateway(t, config.ExposeBoth, nil)
	changed := make(chan struct{}, 16)
	cs := connect(t, g, &mcp.ClientOptions{ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
		changed <- struct{}{}
	}})
	names := toolNames(t, cs)
	for _, want := range []string{"search_tools", "tool_info", "call_tool_chain", "everything__echo", "everything__get-sum",
		"everything__get-structured-content", "dyn__first"} {
		if !slices.Contains(names, want) {
			t.Errorf("tools/list lacks %s: %v", want, names)
		}
	}
	if slices.Contains(names, "everything__get-env") {
		t.Errorf("the denied everything__get-env is listed")
	}
	n := 0
	for _, e := range g.app.Catalog.Entries() {
		if e.Backend == "everything" {
			n++
		}
	}
	if got := len(names); got < n+5 {
		t.Errorf("%d tools listed for %d everything tools", got, n)
	}

	ctx := context.Background()
	for _, c := range []struct {
		tool string
		args map[string]any
	}{
		{"get-sum", map[string]any{"a": 2, "b": 40}},
		{"get-structured-content", map[string]any{"location": "Chicago"}},
		{"echo", map[string]any{"message": "hi"}},
	} {
		got, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "everything__" + c.tool, Arguments: c.args})
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := json.Marshal(c.args)
		want, err := g.app.Backends.Call(ctx, "everything", &mcp.CallToolParams{Name: c.tool, Arguments: json.RawMessage(raw)})
		if err != nil {
			t.Fatal(err)
		}
		gj, _ := json.Marshal(struct {
			C []mcp.Content
			S any
			E bool
		}{got.Content, got.StructuredContent, got.IsError})
		wj, _ := json.Marshal(struct {
			C []mcp.Content
			S any
			E bool
		}{want.Content, want.StructuredContent, want.IsError})
		if string(gj) != string(wj) {
			t.Errorf("%s: passthrough returned\n%s\nthe backend returned\n%s", c.tool, gj, wj)
		}
	}
	if sc, ok := func() (map[string]any, bool) {
		r, _ := cs.CallTool(ctx, &mcp.CallToolParams{Name: "everything__get-structured-content", Arguments: map[string]any{"location": "Chicago"}})
		m, ok := r.StructuredContent.(map[string]any)
		return m, ok
	}(); !ok || sc["temperature"] == nil {
		t.Errorf("structuredContent not passed through: %v", sc)
	}
	if res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "everything__get-env", Arguments: map[string]any{}}); err == nil &&
		(!res.IsError || res.Meta["isogate/code"] != "TOOL_DENIED") {
		t.Errorf("calling the denied everything__get-env succeeded: %+v", res)
	}
	// The pipeline refuses it too, whoever asks.
	if _, err := g.app.Calls.Call(ctx, &pipeline.Call{Backend: "everything", Tool: "get-env"}); v8sandbox.CodeOf(err) != pipeline.CodeToolDenied {
		t.Errorf("pipeline call of get-env: %v", err)
	}
	// Passthrough calls are counted like code-mode calls (the stats stage).
	if calls := g.app.Observer.Stats().Snapshot().ToolCalls; calls < 4 {
		t.Errorf("stats counted %d tool calls, want the passthrough calls too", calls)
	}

	// list_changed: a tool added to and removed from a backend.
	drain := func() {
		for {
			select {
			case <-changed:
			default:
				return
			}
		}
	}
	waitFor := func(want bool) {
		t.Helper()
		deadline := time.After(20 * time.Second)
		for {
			if slices.Contains(toolNames(t, cs), "dyn__second") == want {
				return
			}
			select {
			case <-changed:
			case <-deadline:
				t.Fatalf("dyn__second listed != %v after list_changed: %v", want, toolNames(t, cs))
			}
		}
	}
	drain()
	mcp.AddTool(dyn, &mcp.Tool{Name: "second", Description: "Added later."},
		func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
			return textResult("second", false), nil, nil
		})
	waitFor(true)
	if res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "dyn__second", Arguments: map[string]any{}}); err != nil || res.Content[0].(*mcp.TextContent).Text != "second" {
		t.Errorf("dyn__second: %v %+v", err, res)
	}
	dyn.RemoveTools("second")
	waitFor(false)
}

// TestExposePerListener: the HTTP endpoint serves server.expose by default
// and another set with ?expose=…; an unknown value is refused.
func TestExposePerListener(t *testing.T) {
	g, _ := surfaceGateway(t, config.ExposeMeta, nil)
	srv := httptest.NewServer(g.HTTPHandler())
	defer srv.Close()
	list := func(query string) ([]string, error) {
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "agent"}, nil).Connect(context.Background(),
			&mcp.StreamableClientTransport{Endpoint: srv.URL + "/mcp" + query}, nil)
		if err != nil {
			return nil, err
		}
		defer cs.Close()
		return toolNames(t, cs), nil
	}
	for query, want := range map[string][2]bool{ // has search_tools, has everything__echo
		"": {true, false}, "?expose=meta": {true, false}, "?expose=passthrough": {false, true}, "?expose=both": {true, true},
	} {
		names, err := list(query)
		if err != nil {
			t.Fatalf("%q: %v", query, err)
		}
		if got := [2]bool{slices.Contains(names, "search_tools"), slices.Contains(names, "everything__echo")}; got != want {
			t.Errorf("%q: search_tools, everything__echo listed = %v, want %v: %v", query, got, want, names)
		}
	}
	if _, err := list("?expose=everything"); err == nil {
		t.Error("?expose=everything was accepted")
	}
}

// TestPassthroughShaping: with server.passthrough_shaping a large text
// result is cut by the output pipeline and stays readable as a result
// resource; without it the same call returns the text unchanged.
func TestPassthroughShaping(t *testing.T) {
	big := strings.Repeat("a line of backend output\n", 4000)
	for _, shaping := range []bool{true, false} {
		g, dyn := surfaceGateway(t, config.ExposePassthrough, func(c *config.Config) {
			c.Server.PassthroughShaping = shaping
			c.Sandbox.MaxOutputSize = 2000
		})
		mcp.AddTool(dyn, &mcp.Tool{Name: "big"}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
			return textResult(big, false), nil, nil
		})
		changed := make(chan struct{}, 16)
		cs := connect(t, g, &mcp.ClientOptions{ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { changed <- struct{}{} }})
		deadline := time.After(20 * time.Second)
		for !slices.Contains(toolNames(t, cs), "dyn__big") {
			select {
			case <-changed:
			case <-deadline:
				t.Fatal("dyn__big never listed")
			}
		}
		text, isErr, _ := callText(t, cs, "dyn__big", map[string]any{})
		switch {
		case isErr:
			t.Fatalf("shaping=%v: %s", shaping, text)
		case shaping && (len(text) > 2000 || !strings.Contains(text, "isogate://result/")):
			t.Errorf("shaped result is %d bytes: %.300s", len(text), text)
		case !shaping && text != big:
			t.Errorf("unshaped result changed (%d bytes, want %d)", len(text), len(big))
		}
	}
}

// TestPassthroughAnnotationsShownNotTrusted: a backend's annotations reach
// the client unchanged, but they grant nothing: echo, annotated read-only by
// server-everything, is denied by policy and stays unlisted and uncallable.
func TestPassthroughAnnotationsShownNotTrusted(t *testing.T) {
	g, _ := surfaceGateway(t, config.ExposePassthrough, func(cfg *config.Config) {
		b := cfg.Backends["everything"]
		b.Tools.Deny = append(b.Tools.Deny, "echo")
		cfg.Backends["everything"] = b
	})
	cs := connect(t, g, nil)
	ctx := context.Background()
	direct, err := g.app.Backends.Session(ctx, "everything")
	if err != nil {
		t.Fatal(err)
	}
	backendTools := map[string]*mcp.Tool{}
	for tool, err := range direct.Tools(ctx, nil) {
		if err != nil {
			t.Fatal(err)
		}
		backendTools[tool.Name] = tool
	}
	if a := backendTools["echo"].Annotations; a == nil || !a.ReadOnlyHint {
		t.Fatalf("server-everything's echo is no longer annotated read-only: %+v", a)
	}
	listed := map[string]*mcp.Tool{}
	for tool, err := range cs.Tools(ctx, nil) {
		if err != nil {
			t.Fatal(err)
		}
		listed[tool.Name] = tool
	}
	got, ok := listed["everything__get-structured-content"]
	if !ok {
		t.Fatalf("everything__get-structured-content not listed: %v", toolNames(t, cs))
	}
	gj, _ := json.Marshal(got.Annotations)
	wj, _ := json.Marshal(backendTools["get-structured-content"].Annotations)
	if got.Annotations == nil || string(gj) != string(wj) {
		t.Errorf("annotations %s, backend's %s", gj, wj)
	}
	if _, ok := listed["everything__echo"]; ok {
		t.Error("denied everything__echo listed because it is annotated read-only")
	}
	// Refused as a denied tool (TOOL_DENIED naming the rule), not run.
	if res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "everything__echo", Arguments: map[string]any{"message": "hi"}}); err == nil &&
		(!res.IsError || res.Meta["isogate/code"] != "TOOL_DENIED") {
		t.Errorf("calling the denied, read-only-annotated everything__echo succeeded: %+v", res)
	}
}
