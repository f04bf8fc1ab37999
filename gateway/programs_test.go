package gateway

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/isogate/isogate/config"
	"github.com/isogate/isogate/internal/resultstore/redistest"
)

// programTokens are the principals of the saved-program tests: root is
// the admin (server.auth.admins).
var programTokens = map[string]config.StaticToken{
	"alice": {Token: "alice-programs-token-1"},
	"bob":   {Token: "bob-programs-token-222"},
	"carol": {Token: "carol-programs-token-3"},
	"root":  {Token: "root-programs-token-44"},
}

// programsGateway serves the test backend "local" (echo, block) with the
// programs' principals, saved programs kept in dataDir (or on Redis).
func programsGateway(t *testing.T, dataDir, redisURL string) *httpGateway {
	t.Helper()
	return newHTTPGateway(t, func(c *config.Config) {
		c.Store.DataDir = dataDir
		c.Store.RedisURL = redisURL
		c.Server.Auth.Mode = config.AuthToken
		c.Server.Auth.Tokens = programTokens
		c.Server.Auth.Admins = []string{"root"}
		c.Server.Auth.Rules = map[string]config.AccessRule{
			"carol-no-reports": {Principals: []string{"carol"}, Deny: []string{"programs.report_*"}},
			"bob-no-block":     {Principals: []string{"bob"}, Deny: []string{"local.block"}},
		}
		c.Backends = map[string]config.Backend{} // local is added by newHTTPGateway
		c.Sandbox.Typecheck = "off"              // saving checks as strict whatever the mode
	})
}

// connectProgram opens a session of name; changed receives its
// tools/list_changed notifications.
func (h *httpGateway) connectProgram(t *testing.T, name string, changed chan<- struct{}) *mcp.ClientSession {
	t.Helper()
	opts := &mcp.ClientOptions{}
	if changed != nil {
		opts.ToolListChangedHandler = func(context.Context, *mcp.ToolListChangedRequest) {
			select {
			case changed <- struct{}{}:
			default:
			}
		}
	}
	c := mcp.NewClient(&mcp.Implementation{Name: name}, opts)
	cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: h.url,
		HTTPClient: &http.Client{Transport: bearer{programTokens[name].Token}}}, nil)
	if err != nil {
		t.Fatalf("%s connects: %v", name, err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// call calls a tool and returns its text, error flag and isogate/code.
func callProgramTool(t *testing.T, cs *mcp.ClientSession, tool string, args any) (string, bool, string) {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", tool, err)
	}
	code, _ := res.Meta["isogate/code"].(string)
	return res.Content[0].(*mcp.TextContent).Text, res.IsError, code
}

func programToolNames(t *testing.T, cs *mcp.ClientSession) []string {
	t.Helper()
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, tl := range res.Tools {
		out = append(out, tl.Name)
	}
	return out
}

const echoTwice = `const a = await local.echo({ x: args.x }); const b = await local.echo({ x: args.x + "!" }); return [a, b];`

// TestSavedProgramsAsTools: saved by alice, announced with
// tools/list_changed, listed with its parameters to another session of
// alice and called there; not seen by bob until root publishes it; refused
// at save when it may call a tool the caller's rules deny (PLAN_DENIED) or
// a tool that does not exist (TYPECHECK_FAILED); the
// caller's rules deny programs as they deny tools.
func TestSavedProgramsAsTools(t *testing.T) {
	h := programsGateway(t, t.TempDir(), "")
	changed := make(chan struct{}, 1)
	alice1 := h.connectProgram(t, "alice", changed)
	alice2 := h.connectProgram(t, "alice", nil)
	bob := h.connectProgram(t, "bob", nil)
	programToolNames(t, alice1) // a listing: the client now expects list_changed

	text, isErr, code := callProgramTool(t, alice1, "save_program", map[string]any{
		"name": "echo_twice", "description": "Echoes x twice.", "code": echoTwice, "parameters": "{ x: string }"})
	if isErr {
		t.Fatalf("save: %s (%s)", text, code)
	}
	if !strings.Contains(text, "echo_twice@1") || !strings.Contains(text, "local.echo") {
		t.Fatalf("save said %q", text)
	}
	select {
	case <-changed:
	case <-time.After(20 * time.Second):
		t.Fatal("no tools/list_changed after the save")
	}
	res, err := alice2.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var tool *mcp.Tool
	for _, tl := range res.Tools {
		if tl.Name == "program_echo_twice" {
			tool = tl
		}
	}
	if tool == nil {
		t.Fatalf("alice's other session does not list program_echo_twice: %v", programToolNames(t, alice2))
	}
	if !strings.Contains(tool.Description, "Calls local.echo") || !strings.Contains(tool.Description, "await programs.echo_twice(args)") {
		t.Errorf("description %q does not say what it calls", tool.Description)
	}
	if s, _ := tool.InputSchema.(map[string]any); s["required"] == nil {
		t.Errorf("input schema %v: x is required", tool.InputSchema)
	}
	text, isErr, _ = callProgramTool(t, alice2, "program_echo_twice", map[string]any{"x": "hi"})
	if isErr || !strings.Contains(text, `hi!`) {
		t.Fatalf("called directly: %s", text)
	}
	if _, isErr, code = callProgramTool(t, alice2, "program_echo_twice", map[string]any{}); !isErr || code != "INVALID_ARGUMENTS" {
		t.Fatalf("without x: code %q", code)
	}

	// Bob neither lists nor calls it, nor may he publish it.
	if slices.Contains(programToolNames(t, bob), "program_echo_twice") {
		t.Fatal("bob lists alice's private program")
	}
	if _, isErr, code = callProgramTool(t, bob, "program_echo_twice", map[string]any{"x": "hi"}); !isErr || code != "PROGRAM_NOT_FOUND" {
		t.Fatalf("bob calls alice's program: code %q", code)
	}
	if _, isErr, code = callProgramTool(t, bob, "programs", map[string]any{"action": "publish", "owner": "alice", "name": "echo_twice", "to": []string{"bob"}}); !isErr || code != "PROGRAM_FORBIDDEN" {
		t.Fatalf("bob publishes: code %q", code)
	}
	root := h.connectProgram(t, "root", nil)
	if text, isErr, _ = callProgramTool(t, root, "programs", map[string]any{"action": "publish", "owner": "alice", "name": "echo_twice", "to": []string{"bob"}}); isErr {
		t.Fatalf("root publishes: %s", text)
	}
	if !slices.Contains(programToolNames(t, bob), "program_echo_twice") {
		t.Fatal("published to bob, bob does not list it")
	}
	if text, isErr, _ = callProgramTool(t, bob, "program_echo_twice", map[string]any{"x": "bob"}); isErr || !strings.Contains(text, "bob!") {
		t.Fatalf("bob calls the published program: %s", text)
	}

	// Refused at save: a tool that does not exist, a denied tool.
	if _, isErr, code = callProgramTool(t, alice1, "save_program", map[string]any{
		"name": "typo", "description": "d", "code": `return await local.ecko({ x: 1 })`}); !isErr || code != "TYPECHECK_FAILED" {
		t.Fatalf("a typo'd tool saved: code %q", code)
	}
	if _, isErr, code = callProgramTool(t, bob, "save_program", map[string]any{
		"name": "blocker", "description": "d", "code": `for (const x of [1, 2]) await local.echo({ x }); return await local.block({})`}); !isErr || code != "PLAN_DENIED" {
		t.Fatalf("bob saves a program that calls a tool his rules deny: code %q", code)
	}
	carol := h.connectProgram(t, "carol", nil)
	if _, isErr, code = callProgramTool(t, carol, "save_program", map[string]any{
		"name": "report_x", "description": "d", "code": `return 1`}); isErr {
		t.Fatalf("carol saves: %s", code)
	}
	// Carol's rules deny programs.report_*: not listed, not called.
	if slices.Contains(programToolNames(t, carol), "program_report_x") {
		t.Fatal("carol lists a program her rules deny")
	}
	if _, isErr, code = callProgramTool(t, carol, "program_report_x", map[string]any{}); !isErr || code != "TOOL_DENIED" {
		t.Fatalf("carol calls a program her rules deny: code %q", code)
	}
}

// TestSavedProgramsOutliveTheGateway: kept across a restart (bbolt in
// store.data_dir) and served by replica B after a save on replica A
// (Redis).
func TestSavedProgramsOutliveTheGateway(t *testing.T) {
	dir := t.TempDir()
	a := programsGateway(t, dir, "")
	alice := a.connectProgram(t, "alice", nil)
	if text, isErr, _ := callProgramTool(t, alice, "save_program", map[string]any{"name": "kept", "description": "d", "code": echoTwice}); isErr {
		t.Fatal(text)
	}
	alice.Close()
	a.g.Close()
	b := programsGateway(t, dir, "")
	if text, isErr, _ := callProgramTool(t, b.connectProgram(t, "alice", nil), "program_kept", map[string]any{"x": "again"}); isErr || !strings.Contains(text, "again!") {
		t.Fatalf("after a restart: %s", text)
	}

	srv := redistest.ForTest(t)
	r1 := programsGateway(t, t.TempDir(), srv.URL())
	r2 := programsGateway(t, t.TempDir(), srv.URL())
	if text, isErr, _ := callProgramTool(t, r1.connectProgram(t, "alice", nil), "save_program", map[string]any{"name": "shared", "description": "d", "code": echoTwice}); isErr {
		t.Fatal(text)
	}
	if text, isErr, _ := callProgramTool(t, r2.connectProgram(t, "alice", nil), "program_shared", map[string]any{"x": "b"}); isErr || !strings.Contains(text, "b!") {
		t.Fatalf("replica B: %s", text)
	}
}
