package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/isogate/isogate/config"
	"github.com/isogate/isogate/internal/app"
	"github.com/isogate/isogate/internal/pipeline"
	"github.com/isogate/isogate/internal/surface"
	"github.com/isogate/isogate/v8sandbox"
)

// fsGateway is a gateway over the real server-filesystem (serving dir) and
// server-everything, with the example policy on filesystem.
func fsGateway(t *testing.T, dir string, mutate func(*config.Config)) *Gateway {
	t.Helper()
	fsPath, _ := filepath.Abs("../examples/node_modules/@modelcontextprotocol/server-filesystem/dist/index.js")
	if _, err := os.Stat(fsPath); err != nil {
		t.Skip("server-filesystem is not installed; run make deps")
	}
	cfg := config.Default()
	cfg.Server.CacheDir = t.TempDir()
	cfg.Sandbox.Timeout = 10 * time.Second
	cfg.Sandbox.Isolation = config.IsolationThread
	cfg.Sandbox.TrustedCode = true // the test's own programs, on the shared in-process pool
	cfg.Backends = map[string]config.Backend{
		"filesystem": {Name: "filesystem", Transport: config.TransportStdio, Command: "node",
			Args: []string{fsPath, dir}, Timeout: 10 * time.Second, MaxConcurrentCalls: 8,
			Tools: config.ToolPolicy{
				Allow:   []string{"read_*", "list_*", "search_files"},
				Deny:    []string{"write_file"},
				Approve: []string{"move_file", "edit_file"},
			}},
		"everything": {Name: "everything", Transport: config.TransportStdio, Command: "node",
			Args: []string{everythingPath(t), "stdio"}, Timeout: 10 * time.Second, MaxConcurrentCalls: 8},
	}
	if mutate != nil {
		mutate(cfg)
	}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	return startHealthy(t, cfg, app.Options{Runner: testPool()})
}

// startGateway creates and starts a gateway that is closed when the test
// ends; it does not wait for the backends.
func startGateway(t testing.TB, cfg *config.Config, opts app.Options) *Gateway {
	t.Helper()
	g, err := build(cfg, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.Close() })
	if err := g.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	return g
}

// startHealthy is startGateway that also waits (up to 30 s) until every
// backend is connected.
func startHealthy(t testing.TB, cfg *config.Config, opts app.Options) *Gateway {
	t.Helper()
	g := startGateway(t, cfg, opts)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := g.app.Backends.WaitHealthy(ctx); err != nil {
		t.Fatal(err)
	}
	return g
}

// connect attaches a real go-sdk client to g over in-memory transports.
func connect(t *testing.T, g *Gateway, opts *mcp.ClientOptions, version ...string) *mcp.ClientSession {
	t.Helper()
	var sopts *mcp.ClientSessionOptions
	if len(version) > 0 {
		sopts = &mcp.ClientSessionOptions{ProtocolVersion: version[0]}
	}
	st, ct := mcp.NewInMemoryTransports()
	if _, err := g.Server().Connect(context.Background(), st, nil); err != nil {
		t.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "agent"}, opts).Connect(context.Background(), ct, sopts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

func callText(t *testing.T, cs *mcp.ClientSession, tool string, args map[string]any) (string, bool, *mcp.CallToolResult) {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatal(err)
	}
	return res.Content[0].(*mcp.TextContent).Text, res.IsError, res
}

func chainOK(t *testing.T, cs *mcp.ClientSession, code string) string {
	t.Helper()
	text, isErr, _ := callText(t, cs, "call_tool_chain", map[string]any{"code": code})
	if isErr {
		t.Fatalf("program failed: %s\n%s", code, text)
	}
	return text
}

// TestToolPolicyAgreesEverywhere: search, tool_info, list_tools_meta,
// __interfaces, the bridge and the call boundary all agree on what the
// policy allows, and no spelling reaches a denied tool.
func TestToolPolicyAgreesEverywhere(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "a.txt"), []byte("hello"), 0o600); err != nil {
		t.Fatal(err)
	}
	g := fsGateway(t, dir, func(c *config.Config) {
		b := c.Backends["everything"]
		b.Tools.Deny = []string{"ECHO"} // deny alone: everything else stays allowed
		c.Backends["everything"] = b
	})
	cs := connect(t, g, nil)
	offered := []string{"filesystem.read_text_file", "filesystem.list_directory", "filesystem.search_files",
		"filesystem.move_file", "filesystem.edit_file"}
	hidden := []string{"filesystem.write_file", "filesystem.create_directory", "filesystem.directory_tree", "filesystem.get_file_info"}

	list, _, _ := callText(t, cs, "list_tools_meta", map[string]any{"page_size": 500})
	ifaces := chainOK(t, cs, `return Object.keys(__interfaces.filesystem).map(k => "filesystem." + k)`)
	bridge := chainOK(t, cs, `return Object.keys(filesystem).map(k => "filesystem." + k)`)
	for _, name := range offered {
		for what, text := range map[string]string{"list_tools_meta": list, "__interfaces": ifaces, "bridge": bridge} {
			if !strings.Contains(text, `"`+name+`"`) {
				t.Errorf("%s lacks the allowed %s:\n%s", what, name, text)
			}
		}
		if text, isErr, _ := callText(t, cs, "tool_info", map[string]any{"tool_name": name}); isErr {
			t.Errorf("tool_info %s: %s", name, text)
		}
	}
	for _, name := range hidden {
		tool := strings.TrimPrefix(name, "filesystem.")
		for what, text := range map[string]string{"list_tools_meta": list, "__interfaces": ifaces, "bridge": bridge} {
			if strings.Contains(text, `"`+name+`"`) {
				t.Errorf("%s offers the denied %s", what, name)
			}
		}
		if text, _, _ := callText(t, cs, "search_tools", map[string]any{"query": strings.ReplaceAll(tool, "_", " "), "limit": 50}); strings.Contains(text, name) {
			t.Errorf("search offers the denied %s:\n%s", name, text)
		}
		if text, isErr, _ := callText(t, cs, "tool_info", map[string]any{"tool_name": name}); !isErr {
			t.Errorf("tool_info describes the denied %s:\n%s", name, text)
		}
	}

	// Every spelling a program can try fails, in every tier, and nothing is written.
	target := filepath.Join(dir, "pwned.txt")
	args := `{path: ` + jsString(target) + `, content: "x"}`
	for _, code := range []string{
		`{"tool": "filesystem.write_file", "arguments": {"path": ` + jsString(target) + `, "content": "x"}}`,
		`return await filesystem.write_file(` + args + `)`,
		`return await filesystem["write_file"](` + args + `)`,
		`return await filesystem.WRITE_FILE(` + args + `)`,
		`return await globalThis["filesystem"]["write-file"](` + args + `)`,
		`return await filesystem["ｗｒｉｔｅ_ｆｉｌｅ"](` + args + `)`,
		`const t = __getToolInterface("filesystem.write_file"); return t`,
	} {
		if text, isErr, _ := callText(t, cs, "call_tool_chain", map[string]any{"code": code}); !isErr {
			t.Errorf("program reached the denied tool: %s\n%s", code, text)
		}
	}
	// The call boundary refuses it again, under any spelling that folds to it.
	ctx := context.Background()
	for _, tool := range []string{"write_file", "WRITE_FILE", "Write_File", "write\u200d_file", "ｗｒｉｔｅ_ｆｉｌｅ", "create_directory"} {
		_, err := g.app.Calls.Call(ctx, &pipeline.Call{Backend: "filesystem", Tool: tool,
			Args: json.RawMessage(`{"path":` + jsString(target) + `,"content":"x"}`)})
		var pe *pipeline.Error
		if !errors.As(err, &pe) || pe.Code != pipeline.CodeToolDenied {
			t.Errorf("call boundary let %q through: %v", tool, err)
		}
	}
	for _, tool := range []string{"echo", "Echo", "e\u200bcho", "ｅｃｈｏ", "ECHO"} {
		_, err := g.app.Calls.Call(ctx, &pipeline.Call{Backend: "everything", Tool: tool, Args: json.RawMessage(`{"message":"x"}`)})
		if v8sandbox.CodeOf(err) != pipeline.CodeToolDenied {
			t.Errorf("call boundary let everything.%q through: %v", tool, err)
		}
	}
	if text, isErr, _ := callText(t, cs, "call_tool_chain", map[string]any{"code": `try { await everything.echo({message: "x"}); return "reached" } catch (e) { return e.message }`}); isErr || strings.Contains(text, "reached") {
		t.Errorf("everything.echo reachable: %s", text)
	}
	if text := chainOK(t, cs, `return await everything.get_sum({a: 2, b: 3})`); !strings.Contains(text, "5") {
		t.Errorf("a tool outside deny is not reachable: %s", text)
	}
	if _, err := os.Stat(target); !os.IsNotExist(err) {
		t.Fatalf("a denied tool wrote %s", target)
	}
	// Allowed tools work.
	if text := chainOK(t, cs, `return await filesystem.read_text_file({path: `+jsString(filepath.Join(dir, "a.txt"))+`})`); !strings.Contains(text, "hello") {
		t.Fatalf("read_text_file: %s", text)
	}
}

func compact(raw []byte) string {
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		return string(raw)
	}
	return b.String()
}

func jsString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// TestToolBudget: the call after sandbox.max_tool_calls rejects with
// TOOL_BUDGET, catchable in the program.
func TestToolBudget(t *testing.T) {
	g := fsGateway(t, t.TempDir(), func(c *config.Config) { c.Sandbox.MaxToolCalls = 3 })
	cs := connect(t, g, nil)
	text := chainOK(t, cs, `let n = 0;
for (let i = 0; i < 10; i++) {
  try { await everything.echo({message: "m" + i}); n++; }
  catch (e) { return {n, code: e.code, error: e.message}; }
}
return {n};`)
	if !strings.Contains(text, `"n": 3`) || !strings.Contains(text, `"code": "TOOL_BUDGET"`) || !strings.Contains(text, "sandbox.max_tool_calls") {
		t.Fatalf("budget: %s", text)
	}
	// The budget is per run: the next run gets a fresh one.
	chainOK(t, cs, `await everything.echo({message: "a"}); await everything.echo({message: "b"}); return await everything.echo({message: "c"})`)
}

// elicitations is a client's record of the approval requests it saw.
type elicitations struct {
	mu       sync.Mutex
	requests []*mcp.ElicitParams
	action   string
}

func (e *elicitations) handler(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.requests = append(e.requests, req.Params)
	return &mcp.ElicitResult{Action: e.action}, nil
}

// TestApprovals: a tool under approve asks the person through elicitation;
// accept runs the call, decline and cancel reject it with APPROVAL_DENIED,
// and a client without elicitation gets APPROVAL_REQUIRED. Clients on the
// latest protocol answer through multi round-trip results (SEP-2322),
// older ones through a server-to-client request.
func TestApprovals(t *testing.T) {
	for _, version := range []string{"", "2025-11-25"} {
		name := version
		if name == "" {
			name = "latest"
		}
		t.Run(name, func(t *testing.T) { testApprovals(t, version) })
	}
}

func testApprovals(t *testing.T, version string) {
	dir := t.TempDir()
	g := fsGateway(t, dir, func(c *config.Config) { c.Server.Expose = config.ExposeBoth })
	el := &elicitations{}
	var versions []string
	if version != "" {
		versions = []string{version}
	}
	asking := connect(t, g, &mcp.ClientOptions{ElicitationHandler: el.handler}, versions...)
	plain := connect(t, g, nil, versions...)

	move := func(cs *mcp.ClientSession, from, to string) (string, bool) {
		if err := os.WriteFile(filepath.Join(dir, from), []byte(from), 0o600); err != nil {
			t.Fatal(err)
		}
		code := `try { return await filesystem.move_file({source: ` + jsString(filepath.Join(dir, from)) +
			`, destination: ` + jsString(filepath.Join(dir, to)) + `}); } catch (e) { return "caught: " + e.code + " | " + e.message; }`
		text, isErr, _ := callText(t, cs, "call_tool_chain", map[string]any{"code": code})
		return text, isErr
	}
	exists := func(name string) bool { _, err := os.Stat(filepath.Join(dir, name)); return err == nil }

	el.action = "accept"
	if text, isErr := move(asking, "a1", "b1"); isErr || strings.Contains(text, "caught") || !exists("b1") || exists("a1") {
		t.Fatalf("accepted move did not run: %s", text)
	}
	if len(el.requests) != 1 {
		t.Fatalf("%d elicitations, want 1", len(el.requests))
	}
	msg := el.requests[0].Message
	for _, want := range []string{"move_file", "filesystem", filepath.Join(dir, "a1")} {
		if !strings.Contains(msg, want) {
			t.Errorf("approval request lacks %q:\n%s", want, msg)
		}
	}
	for _, action := range []string{"decline", "cancel"} {
		el.action = action
		if text, _ := move(asking, "x-"+action, "y-"+action); !strings.Contains(text, "caught: APPROVAL_DENIED") || exists("y-"+action) {
			t.Fatalf("%s: %s", action, text)
		}
	}
	// Approval is per call: a second call in the same run asks again.
	el.action = "accept"
	before := len(el.requests)
	chainOK(t, asking, `for (const n of ["p", "q"]) {
  await filesystem.edit_file({path: `+jsString(filepath.Join(dir, "b1"))+`, edits: [{oldText: "a1", newText: n + "1"}], dryRun: true});
}
return 1`)
	if got := len(el.requests) - before; got != 2 {
		t.Fatalf("two approved calls asked %d times, want 2", got)
	}
	text, _ := move(plain, "c1", "d1")
	if !strings.Contains(text, "caught: APPROVAL_REQUIRED") || !strings.Contains(text, "backends.filesystem.tools.approve") || exists("d1") {
		t.Fatalf("client without elicitation: %s", text)
	}

	// Passthrough calls ask the same way (move_file: server.tool_names auto,
	// and no other backend has one).
	direct := func(cs *mcp.ClientSession, from, to string) *mcp.CallToolResult {
		if err := os.WriteFile(filepath.Join(dir, from), []byte(from), 0o600); err != nil {
			t.Fatal(err)
		}
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "move_file",
			Arguments: map[string]any{"source": filepath.Join(dir, from), "destination": filepath.Join(dir, to)}})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	el.action = "accept"
	before = len(el.requests)
	if res := direct(asking, "p1", "p2"); res.IsError || !exists("p2") || len(el.requests) != before+1 {
		t.Fatalf("accepted passthrough move: %+v, asked %d times", res.Content, len(el.requests)-before)
	}
	el.action = "decline"
	if res := direct(asking, "p3", "p4"); !res.IsError || res.Meta["isogate/code"] != "APPROVAL_DENIED" || exists("p4") {
		t.Fatalf("declined passthrough move: %+v %v", res.Content, res.Meta)
	}
	if res := direct(plain, "p5", "p6"); !res.IsError || res.Meta["isogate/code"] != "APPROVAL_REQUIRED" || exists("p6") {
		t.Fatalf("passthrough move without elicitation: %+v %v", res.Content, res.Meta)
	}
}

// TestRunRecords: every run has an id in _meta; its record, with every
// call and its timings, is readable as a resource by its session only and
// is written to record_dir.
func TestRunRecords(t *testing.T) {
	recDir := t.TempDir()
	g := fsGateway(t, t.TempDir(), func(c *config.Config) { c.Server.RecordDir = recDir })
	cs := connect(t, g, nil)
	code := `console.log("start");
const [s, e] = await Promise.all([everything.get_sum({a: 1, b: 2}), everything.echo({message: "hi"})]);
try { await filesystem.write_file({path: "/tmp/x", content: "x"}); } catch (err) { console.log("refused"); }
return {s, e};`
	_, isErr, res := callText(t, cs, "call_tool_chain", map[string]any{"code": code})
	if isErr {
		t.Fatal(res.Content[0].(*mcp.TextContent).Text)
	}
	id, _ := res.Meta["isogate/run"].(string)
	if id == "" {
		t.Fatalf("no isogate/run in _meta: %v", res.Meta)
	}
	rr, err := cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: surface.RunURIPrefix + id})
	if err != nil {
		t.Fatal(err)
	}
	var rec pipeline.RunRecord
	if err := json.Unmarshal([]byte(rr.Contents[0].Text), &rec); err != nil {
		t.Fatal(err)
	}
	if rec.ID != id || rec.Code != code || rec.Tier != "v8" || rec.Outcome != "ok" || rec.Error != nil ||
		len(rec.Console) != 2 || rec.ResultBytes == 0 || rec.Started.IsZero() {
		t.Fatalf("record: %+v", rec)
	}
	tools := map[string]pipeline.CallRecord{}
	for i, c := range rec.Calls {
		if c.Seq != i+1 || c.StartedMS < 0 || c.DurationMS < 0 || c.StartedMS > rec.DurationMS {
			t.Errorf("call %d: %+v", i, c)
		}
		tools[c.Backend+"."+c.Tool] = c
	}
	if c := tools["everything.get-sum"]; !c.OK || compact(c.Args.JSON) != `{"a":1,"b":2}` || !strings.Contains(string(c.Result.JSON), "is 3") {
		t.Errorf("get_sum call: %+v", c)
	}
	if c := tools["everything.echo"]; !c.OK || compact(c.Args.JSON) != `{"message":"hi"}` || !strings.Contains(string(c.Result.JSON), "Echo: hi") {
		t.Errorf("echo call: %+v", c)
	}
	if len(rec.Calls) != 2 {
		t.Errorf("%d calls recorded, want 2 (the denied tool is not in the bridge): %+v", len(rec.Calls), rec.Calls)
	}
	file, err := os.ReadFile(filepath.Join(recDir, id+".json"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.TrimSpace(string(file)) != strings.TrimSpace(rr.Contents[0].Text) {
		t.Errorf("record_dir file differs from the resource")
	}
	// Another session of this process reads it (the process is the one
	// principal without authentication).
	other := connect(t, g, nil)
	if again, err := other.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: surface.RunURIPrefix + id}); err != nil || again.Contents[0].Text != rr.Contents[0].Text {
		t.Fatalf("another session of the process reading the run record: %v", err)
	}
	// A refused call is recorded with its code (here: over budget).
	_, _, res = callText(t, cs, "call_tool_chain", map[string]any{"code": `{"tool": "everything.echo", "arguments": {"message": "direct"}}`})
	if id2, _ := res.Meta["isogate/run"].(string); id2 == "" || id2 == id {
		t.Fatalf("tier-1 run id %q", id2)
	}
}

// TestSearchTellsTwinBackendsApart: two real server-filesystem backends
// offer the same tools; search_tools shows each hit's backend with its
// backends.<name>.description, and a query naming what one is for ranks
// its tools first (issue 43).
func TestSearchTellsTwinBackendsApart(t *testing.T) {
	photos, projects := t.TempDir(), t.TempDir()
	g := fsGateway(t, projects, func(cfg *config.Config) {
		fs := cfg.Backends["filesystem"]
		fs.Tools = config.ToolPolicy{}
		cfg.Backends = map[string]config.Backend{"projects": fs, "photos": fs}
		p, q := cfg.Backends["projects"], cfg.Backends["photos"]
		p.Name, p.Description = "projects", "The team's source code, read-write."
		q.Name, q.Description = "photos", "The holiday photo archive, read-only."
		q.Args = []string{fs.Args[0], photos}
		cfg.Backends["projects"], cfg.Backends["photos"] = p, q
	})
	cs := connect(t, g, nil)
	text, isErr, _ := callText(t, cs, "search_tools", map[string]any{"query": "read file", "limit": 20})
	if isErr || !strings.Contains(text, "photos.read_text_file") || !strings.Contains(text, "projects.read_text_file") ||
		!strings.Contains(text, "Backends:\n- photos — The holiday photo archive, read-only.\n- projects — The team's source code, read-write.\n") {
		t.Fatalf("search_tools over twin backends:\n%s", text)
	}
	// projects sorts after photos: without its description a tie would
	// put photos first.
	text, _, _ = callText(t, cs, "search_tools", map[string]any{"query": "read file from the source code", "limit": 3})
	if _, first, _ := strings.Cut(text, "\n"); !strings.HasPrefix(first, "projects.") {
		t.Fatalf("a query naming the source code does not rank its tools first:\n%s", text)
	}
}
