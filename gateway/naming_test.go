package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/isogate/isogate/config"
	"github.com/isogate/isogate/internal/app"
	"github.com/isogate/isogate/internal/backend"
	"github.com/isogate/isogate/internal/surface"
	"github.com/isogate/isogate/internal/testutil"
)

// namingGateway serves two in-process backends, alpha and beta, that both
// offer the tool "whoami" and the prompt "greet" (answering with their
// name) and each a tool of its own ("only_alpha", "only_beta"), with
// server.tool_names mode, backends.beta.priority betaPriority and both the
// meta-tools and the passthrough tools exposed.
func namingGateway(t *testing.T, mode config.ToolNames, betaPriority int) (*Gateway, *testutil.Buffer) {
	t.Helper()
	cfg := config.Default()
	cfg.Server.CacheDir = t.TempDir()
	cfg.Server.Expose = config.ExposeBoth
	cfg.Server.ToolNames = mode
	cfg.Sandbox.Timeout = 10 * time.Second
	cfg.Sandbox.Isolation, cfg.Sandbox.TrustedCode = config.IsolationThread, true
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	newBackend := func(name string) *mcp.Server {
		s := mcp.NewServer(&mcp.Implementation{Name: name}, nil)
		answer := func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
			return textResult(name, false), nil, nil
		}
		mcp.AddTool(s, &mcp.Tool{Name: "whoami", Description: "Names the backend."}, answer)
		mcp.AddTool(s, &mcp.Tool{Name: "only_" + name, Description: "Names the backend too."}, answer)
		s.AddPrompt(&mcp.Prompt{Name: "greet"}, func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: "greet from " + name}}}}, nil
		})
		return s
	}
	// beta is given first: it is first in configuration order, although
	// alpha sorts first by name.
	beta := backend.InMemory("beta", newBackend("beta"))
	beta.Priority = betaPriority
	var logs testutil.Buffer
	g := startHealthy(t, cfg, app.Options{Runner: testPool(), Logger: slog.New(slog.NewTextHandler(&logs, nil)),
		ExtraSpecs: []backend.Spec{beta, backend.InMemory("alpha", newBackend("alpha"))}})
	return g, &logs
}

// TestPassthroughToolNames: a client calls passthrough tools and gets
// prompts by the backends' own names under server.tool_names auto and bare
// and the right backend answers; a shared name goes, in auto, to every
// backend prefixed and, in bare, to the backend with the higher priority
// or, between equal ones, the first in configuration order (the other
// keeps its prefixed name). The collision is logged once, and listed in
// /readyz and isogate://backends; code mode still names tools
// backend.tool.
func TestPassthroughToolNames(t *testing.T) {
	tests := []struct {
		mode         config.ToolNames
		betaPriority int
		tools        map[string]string // client-visible tool → the backend that answers
		absent       []string
		prompts      map[string]string // client-visible prompt → the backend that answers
		winner       string
	}{
		{config.ToolNamesAuto, 0,
			map[string]string{"only_alpha": "alpha", "only_beta": "beta", "alpha__whoami": "alpha", "beta__whoami": "beta"},
			[]string{"whoami", "alpha__only_alpha"},
			map[string]string{"alpha__greet": "alpha", "beta__greet": "beta"}, ""},
		{config.ToolNamesBare, 0,
			map[string]string{"only_alpha": "alpha", "only_beta": "beta", "whoami": "beta", "alpha__whoami": "alpha"},
			[]string{"beta__whoami", "alpha__only_alpha"},
			map[string]string{"greet": "beta", "alpha__greet": "alpha"}, "beta"},
		{config.ToolNamesBare, -1,
			map[string]string{"only_alpha": "alpha", "only_beta": "beta", "whoami": "alpha", "beta__whoami": "beta"},
			[]string{"alpha__whoami"},
			map[string]string{"greet": "alpha", "beta__greet": "beta"}, "alpha"},
	}
	for _, tt := range tests {
		name := string(tt.mode)
		if tt.betaPriority != 0 {
			name += ", alpha first by priority"
		}
		t.Run(name, func(t *testing.T) {
			g, logs := namingGateway(t, tt.mode, tt.betaPriority)
			cs := connect(t, g, nil)
			ctx := context.Background()

			testutil.Eventually(t, 20*time.Second, func() bool {
				names := toolNames(t, cs)
				for tool := range tt.tools {
					if !slices.Contains(names, tool) {
						return false
					}
				}
				return true
			}, "tools/list to have %v", tt.tools)
			names := toolNames(t, cs)
			for _, tool := range append(tt.absent, "isogate__search_tools") {
				if slices.Contains(names, tool) {
					t.Errorf("%s listed: %v", tool, names)
				}
			}
			if !slices.Contains(names, "search_tools") {
				t.Errorf("isogate's search_tools not listed: %v", names)
			}
			for tool, want := range tt.tools {
				if text, isErr, _ := callText(t, cs, tool, map[string]any{}); text != want || isErr {
					t.Errorf("%s answered %q (error %v), want %q", tool, text, isErr, want)
				}
			}
			// Code mode is unaffected: backend.tool.
			if got := chainOK(t, cs, `return (await alpha.whoami({})) + "," + (await beta.whoami({}))`); !strings.Contains(got, "alpha,beta") {
				t.Errorf("call_tool_chain: %s", got)
			}

			testutil.Eventually(t, 20*time.Second, func() bool {
				res, err := cs.ListPrompts(ctx, nil)
				if err != nil {
					t.Fatal(err)
				}
				var names []string
				for _, p := range res.Prompts {
					names = append(names, p.Name)
				}
				for p := range tt.prompts {
					if !slices.Contains(names, p) {
						return false
					}
				}
				return len(names) == len(tt.prompts)
			}, "prompts/list to be %v", tt.prompts)
			for prompt, want := range tt.prompts {
				res, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: prompt})
				if err != nil {
					t.Fatalf("prompts/get %s: %v", prompt, err)
				}
				if text := res.Messages[0].Content.(*mcp.TextContent).Text; text != "greet from "+want {
					t.Errorf("prompts/get %s: %q, want greet from %s", prompt, text, want)
				}
			}

			// Names computed again (as after a reload) log nothing new.
			g.app.Surface.NamingChanged()
			g.app.Surface.NamingChanged()
			log := logs.String()
			for _, what := range []string{`tool \"whoami\"`, `prompt \"greet\"`} {
				if n := strings.Count(log, what); n != 1 {
					t.Errorf("collision over %s logged %d times, want once:\n%s", what, n, log)
				}
			}
			if !strings.Contains(log, `level=WARN msg="backends \"alpha\" and \"beta\" both offer tool \"whoami\"`) &&
				!strings.Contains(log, `level=WARN msg="backends \"beta\" and \"alpha\" both offer tool \"whoami\"`) {
				t.Errorf("the collision is not a warning naming both backends:\n%s", log)
			}

			srv := httptest.NewServer(g.HTTPHandler())
			defer srv.Close()
			resp, err := http.Get(srv.URL + "/readyz")
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			var ready struct {
				Ready          bool
				NameCollisions []surface.NameCollision `json:"name_collisions"`
			}
			if err := json.Unmarshal(body, &ready); err != nil || !ready.Ready || len(ready.NameCollisions) != 2 {
				t.Fatalf("/readyz: %v %s", err, body)
			}
			for i, kind := range []string{surface.KindTool, surface.KindPrompt} {
				c := ready.NameCollisions[i]
				if c.Kind != kind || c.Winner != tt.winner || len(c.Backends) != 2 || len(c.Listed) != 2 {
					t.Errorf("/readyz name_collisions[%d] = %+v", i, c)
				}
			}

			rr, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "isogate://backends"})
			if err != nil {
				t.Fatal(err)
			}
			var rows []struct {
				Name           string
				NameCollisions []surface.NameCollision `json:"name_collisions"`
			}
			if err := json.Unmarshal([]byte(rr.Contents[0].Text), &rows); err != nil || len(rows) != 2 {
				t.Fatalf("isogate://backends: %v %s", err, rr.Contents[0].Text)
			}
			for _, r := range rows {
				if len(r.NameCollisions) != 2 || r.NameCollisions[0].Name != "whoami" || r.NameCollisions[1].Name != "greet" {
					t.Errorf("isogate://backends %s: name_collisions %+v", r.Name, r.NameCollisions)
				}
			}
		})
	}
}

// TestUnknownPassthroughNamePointsAtItsPrefixedForms: a client that calls a
// backend tool by a name the gateway lists only prefixed (a name two
// backends share in auto mode; every name in prefixed mode), or spells it
// with '-' for '_', is told the names it is listed under, still as the
// unknown tool error (-32602) the SDK gives (issue 43).
func TestUnknownPassthroughNamePointsAtItsPrefixedForms(t *testing.T) {
	for _, tt := range []struct {
		mode       config.ToolNames
		call, want string
	}{
		{config.ToolNamesAuto, "whoami", `unknown tool "whoami": several backends offer it; it is listed as "alpha__whoami" or "beta__whoami"`},
		{config.ToolNamesPrefixed, "only_alpha", `unknown tool "only_alpha": it is listed as "alpha__only_alpha"`},
		{config.ToolNamesPrefixed, "only-beta", `unknown tool "only-beta": it is listed as "beta__only_beta"`},
		{config.ToolNamesAuto, "no_such_tool", `unknown tool "no_such_tool"`},
	} {
		t.Run(string(tt.mode)+" "+tt.call, func(t *testing.T) {
			g, _ := namingGateway(t, tt.mode, 0)
			cs := connect(t, g, nil)
			testutil.Eventually(t, 20*time.Second, func() bool {
				return slices.Contains(toolNames(t, cs), "beta__only_beta") || slices.Contains(toolNames(t, cs), "only_beta")
			}, "the passthrough tools to be listed")
			_, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tt.call, Arguments: map[string]any{}})
			var werr *jsonrpc.Error
			if !errors.As(err, &werr) || werr.Code != jsonrpc.CodeInvalidParams || !strings.HasSuffix(werr.Message, tt.want) {
				t.Fatalf("calling %s: %v, want -32602 %q", tt.call, err, tt.want)
			}
			if tt.call == "no_such_tool" && strings.Contains(werr.Message, "listed as") {
				t.Errorf("an unknown name with no prefixed form: %v", err)
			}
		})
	}
}
