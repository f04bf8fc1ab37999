package surface

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/isogate/isogate/config"
	"github.com/isogate/isogate/internal/approvals"
	"github.com/isogate/isogate/internal/backend"
	"github.com/isogate/isogate/internal/catalog"
	"github.com/isogate/isogate/internal/clientreq"
	"github.com/isogate/isogate/internal/codemode"
	"github.com/isogate/isogate/internal/pipeline"
	"github.com/isogate/isogate/internal/sdklog"
	"github.com/isogate/isogate/internal/stats"
)

// Instructions teach an agent the discovery → call workflow.
const Instructions = `isogate gives you many backend MCP servers' tools through a few meta-tools.

Workflow:
1. search_tools {query} finds tools by what they do (BM25 with typo correction). Each hit shows
   its name (backend.tool) and a ready-to-paste call.
2. tool_info {tool_name} shows one tool's parameters and TypeScript signature
   (detail: "full" adds the JSON schemas).
3. call_tool_chain {code} runs a TypeScript/JavaScript program in which every backend is an
   object and every tool an async function: ` + "`const r = await github.search_issues({q: \"bug\"}); return r.items.length;`" + `
   Use loops, Promise.all (calls run concurrently), filtering and mapping; return only what you
   need. Names with hyphens become underscores (everything.get_sum for everything.get-sum).
   console.log output is returned too. Set intent to let large outputs be filtered to what matters.
   A single call can also be sent as {"tool": "backend.tool", "arguments": {...}}.
   Programs keep their own values between runs: await state.get(key), state.set(key, value,
   {ttl?: seconds}), state.delete(key), state.list({prefix?}) (JSON values, yours alone).
4. list_tools_meta pages through every tool name.

Large results are summarised, filtered or truncated; the full result stays readable as the resource
isogate://result/{id} (or isogate://result/{id}/path/to/part), or through read_result {uri, offset, limit}
when resources are not available to you. Backend health: resource isogate://backends.`

type searchInput struct {
	Query string `json:"query" jsonschema:"what you want to do"`
	Limit int    `json:"limit,omitempty" jsonschema:"max tools (default 10)"`
	Brief *bool  `json:"brief,omitempty" jsonschema:"omit tags (default true)"`
	Tag   string `json:"tag,omitempty" jsonschema:"only tools with this tag"`
}

type toolInfoInput struct {
	ToolName string `json:"tool_name" jsonschema:"backend.tool"`
	Detail   string `json:"detail,omitempty" jsonschema:"brief (default) or full (adds JSON schemas)"`
}

type listInput struct {
	Cursor   string `json:"cursor,omitempty" jsonschema:"from the previous page"`
	PageSize int    `json:"page_size,omitempty" jsonschema:"names per page (default 50)"`
}

type chainInput struct {
	Code          string `json:"code" jsonschema:"the program; return its result"`
	Timeout       int64  `json:"timeout,omitempty" jsonschema:"milliseconds (default and max: sandbox.timeout)"`
	MaxOutputSize int    `json:"max_output_size,omitempty" jsonschema:"max bytes returned"`
	Intent        string `json:"intent,omitempty" jsonschema:"what you look for: large outputs are filtered to it"`
}

// newServer builds an MCP server that exposes the meta-tools, the
// passthrough tools or both; every server has the resources and prompts.
func (sf *Surface) newServer(expose config.Expose) *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "isogate", Version: sf.opts.Version}, &mcp.ServerOptions{
		Instructions: Instructions,
		Logger:       sdklog.Demote(sf.logger), // session lifecycle at DEBUG
		// Backend prompts and resources may arrive after a client connects:
		// announce the capabilities from the start.
		Capabilities: &mcp.ServerCapabilities{
			Logging:   &mcp.LoggingCapabilities{},
			Tools:     &mcp.ToolCapabilities{ListChanged: true},
			Prompts:   &mcp.PromptCapabilities{ListChanged: true},
			Resources: &mcp.ResourceCapabilities{ListChanged: true, Subscribe: true},
			// Forwarded to the backend that owns the prompt or template.
			Completions: &mcp.CompletionCapabilities{},
			// Skills (skills.go): isogate's own and its backends'.
			Extensions: skillCapabilities(),
		},
		SubscribeHandler:   sf.aggregate.subscribe,
		UnsubscribeHandler: sf.aggregate.unsubscribe,
		CompletionHandler:  sf.complete,
	})
	sf.installSkills(s)                                        // skill files (skills.go)
	sf.attachPrograms(s, expose)                               // innermost: program tools become call_tool_chain runs
	s.AddReceivingMiddleware(sf.unknownToolMiddleware(expose)) // the principal is known
	s.AddReceivingMiddleware(isogateSchemeMiddleware)
	s.AddReceivingMiddleware(sf.sessionMiddleware)
	s.AddReceivingMiddleware(sf.tasks.Middleware)               // a task's call runs detached from its request (internal/tasks)
	s.AddReceivingMiddleware(sf.programCallsMiddleware(expose)) // a saved program's call is call_tool_chain's, task or not (programcalls.go)
	s.AddReceivingMiddleware(principalMiddleware)
	s.AddReceivingMiddleware(sf.tasks.ResultMiddleware) // a disguised tasks/result (taskelicit.go)
	s.AddReceivingMiddleware(sf.tasks.Listing)
	s.AddReceivingMiddleware(wireSafe) // outermost: sees every answer
	s.AddSendingMiddleware(sf.tasks.Progress)
	s.AddSendingMiddleware(sf.tasks.Elicit)
	sf.addResources(s)
	sf.aggregate.attach(s)
	if expose == config.ExposePassthrough {
		sf.passthrough.attach(s)
		return s
	}
	readOnly := &mcp.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true, OpenWorldHint: jsonschema.Ptr(false)}
	mcp.AddTool(s, &mcp.Tool{Name: "search_tools", Annotations: readOnly,
		Description: "Find backend tools by what they do: names (backend.tool), summaries, ready-to-paste calls."},
		sf.searchTools)
	mcp.AddTool(s, &mcp.Tool{Name: "tool_info", Annotations: readOnly,
		Description: "One tool's parameters and TypeScript signature."},
		sf.toolInfo)
	mcp.AddTool(s, &mcp.Tool{Name: "list_tools_meta", Annotations: readOnly,
		Description: "List every tool name (backend.tool), paginated."},
		sf.listTools)
	// call_tool_chain reaches every backend tool: it may change and reach
	// anything they can.
	mcp.AddTool(s, &mcp.Tool{Name: "call_tool_chain",
		Annotations: &mcp.ToolAnnotations{DestructiveHint: jsonschema.Ptr(true), OpenWorldHint: jsonschema.Ptr(true)},
		Description: "Run a TypeScript/JavaScript program in a V8 sandbox: each backend is an object, each tool an async " +
			"function (`await backend.tool({...})`). Loop, Promise.all, filter; return only what you need."},
		sf.callToolChain)
	if sf.runCode != nil {
		sf.runCode.AddTo(s)
	}
	if expose == config.ExposeBoth {
		sf.passthrough.attach(s)
	}
	return s
}

func textResult(text string, isError bool) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}, IsError: isError}
}

// Bounds of the meta-tools' text inputs: far above any real use, and low
// enough that an answer echoing them (or matching them against every tool)
// stays small and cheap.
const (
	maxQueryBytes    = 2000
	maxToolNameBytes = 512
	maxURIBytes      = 4096
)

// tooLong reports an input over its bound as a tool error, or returns nil.
func tooLong(field, value string, max int) *mcp.CallToolResult {
	if len(value) <= max {
		return nil
	}
	return textResult(fmt.Sprintf("%s is too long: %d bytes, at most %d", field, len(value), max), true)
}

func (sf *Surface) searchTools(ctx context.Context, _ *mcp.CallToolRequest, in searchInput) (*mcp.CallToolResult, any, error) {
	if r := cmp.Or(tooLong("query", in.Query, maxQueryBytes), tooLong("tag", in.Tag, maxToolNameBytes)); r != nil {
		return r, nil, nil
	}
	brief := true
	if in.Brief != nil {
		brief = *in.Brief
	}
	starting := sf.awaitStarting(ctx)
	res, notice := sf.search(ctx, in.Query, catalog.SearchOptions{Limit: in.Limit, Tag: in.Tag, Brief: brief})
	text := res.Text()
	if notice != "" {
		text = strings.TrimRight(text, "\n") + "\n\n" + notice
	}
	// Denied tools are found by no search; a query that is a denied
	// tool's name is told so (the name is known; docs/tools.md).
	if _, err := sf.catalog.What(strings.TrimSpace(in.Query), catalog.Options{DeniedBy: sf.policy.DeniedTo(ctx)}); err != nil {
		if d, ok := errors.AsType[*catalog.DeniedError](err); ok {
			text = d.Error() + "\n\n" + text
		}
	}
	return textResult(withStartingNotice(sf.withBackendNotice(text), starting), false), nil, nil
}

// search ranks the catalogue for a query: fused with embeddings when
// search.embeddings is configured (notice then says when it answered by
// words only, and why), lexically otherwise.
func (sf *Surface) search(ctx context.Context, query string, opts catalog.SearchOptions) (catalog.SearchResult, string) {
	if sf.semantic == nil {
		return sf.catalog.Search(query, opts), ""
	}
	return sf.semantic.Search(ctx, query, opts)
}

func (sf *Surface) toolInfo(ctx context.Context, _ *mcp.CallToolRequest, in toolInfoInput) (*mcp.CallToolResult, any, error) {
	if r := tooLong("tool_name", in.ToolName, maxToolNameBytes); r != nil {
		return r, nil, nil
	}
	deniedTo := sf.policy.DeniedTo(ctx) // the caller's own server.auth.rules
	info, err := sf.catalog.InfoFor(in.ToolName, in.Detail, deniedTo)
	if _, denied := errors.AsType[*catalog.DeniedError](err); err != nil && !denied {
		if r := sf.programInfo(ctx, in.ToolName); r != nil {
			return r, nil, nil
		}
	}
	if err != nil {
		// Wait only when the name is not found: a starting backend may have it.
		if _, denied := errors.AsType[*catalog.DeniedError](err); !denied && len(sf.unknownStarting()) > 0 {
			starting := sf.awaitStarting(ctx)
			if info, err = sf.catalog.InfoFor(in.ToolName, in.Detail, deniedTo); err != nil {
				return textResult(withStartingNotice(sf.withDownNotice(err.Error()), starting), true), nil, nil
			}
			return textResult(info.Text()+typecheckNote(sf.opts.Typecheck), false), nil, nil
		}
		return textResult(sf.withDownNotice(err.Error()), true), nil, nil
	}
	return textResult(info.Text()+typecheckNote(sf.opts.Typecheck), false), nil, nil
}

// typecheckNote tells an agent reading tool_info that call_tool_chain
// programs are checked against these signatures (sandbox.typecheck).
func typecheckNote(mode string) string {
	switch mode {
	case "strict":
		return "\n\ncall_tool_chain programs are type-checked against these signatures before they run (sandbox.typecheck: strict): " +
			"a certain mistake in a tool call (unknown tool or parameter, missing parameter, literal of the wrong type) refuses the program before any call (TYPECHECK_FAILED)."
	case "warn":
		return "\n\ncall_tool_chain programs are type-checked against these signatures before they run (sandbox.typecheck: warn): " +
			"what the checker finds is attached to the result as notices."
	}
	return ""
}

func (sf *Surface) listTools(ctx context.Context, _ *mcp.CallToolRequest, in listInput) (*mcp.CallToolResult, any, error) {
	starting := sf.awaitStarting(ctx)
	names, next, err := sf.catalog.List(in.Cursor, in.PageSize)
	if err != nil {
		return textResult(err.Error(), true), nil, nil
	}
	out := struct {
		Tools      []string `json:"tools"`
		Total      int      `json:"total"`
		NextCursor string   `json:"next_cursor,omitempty"`
		Starting   []string `json:"starting,omitempty"`
		Notice     string   `json:"notice,omitempty"`
	}{names, sf.catalog.Count(), next, starting, startingNotice(starting)}
	if n := downNotice(sf.downBackends()); n != "" {
		out.Notice = strings.TrimSpace(out.Notice + " " + n)
	}
	if out.Tools == nil {
		out.Tools = []string{}
	}
	b, _ := json.Marshal(out)
	return textResult(string(b), false), nil, nil
}

func (sf *Surface) callToolChain(ctx context.Context, req *mcp.CallToolRequest, in chainInput) (*mcp.CallToolResult, any, error) {
	if clientreq.RoundTripEra(req.Session) {
		res, err := sf.rounds.Chain(ctx, req, approvals.Program(in))
		return res, nil, err
	}
	ctx = pipeline.WithApprover(ctx, pipeline.ElicitApprover{Session: req.Session})
	return sf.executeChain(sf.forward.WithAnswerer(ctx, req.Session), req, in), nil, nil
}

// executeChain runs one call_tool_chain program and keeps its run record.
func (sf *Surface) executeChain(ctx context.Context, req *mcp.CallToolRequest, in chainInput) *mcp.CallToolResult {
	creq := codemode.Request{
		Code:          in.Code,
		Timeout:       codemode.Millis(in.Timeout),
		MaxOutputSize: in.MaxOutputSize,
		Intent:        in.Intent,
		Owner:         sf.runOwner(ctx, req),
		Durable:       durableFrom(ctx),
	}
	// The saved programs it calls as programs.<name>(args) (programlib.go).
	lib, err := sf.programLibrary(ctx, in.Code)
	if err != nil {
		return programError(err)
	}
	creq.Programs = lib
	if refused := sf.approvePrograms(ctx, lib); refused != nil {
		return refused
	}
	creq.Approved = sf.savedApproval(ctx, lib)
	// While the program runs, what its backends ask and log reaches this
	// client on this request, and their progress is the run's.
	run, token := sf.forward.BeginRun(ctx, req.Session, req.Params.GetProgressToken())
	defer run.End()
	if token != "" {
		ctx = backend.WithProgressToken(ctx, token)
		creq.OnToolCall = func(_ int, tool string) { run.RunProgress("completed " + tool) }
	}
	// The operator's console sees the run, may cancel it and may answer
	// its approvals (console.go).
	var offDesk func()
	ctx, creq.OnToolCall, creq.OnRun, offDesk = sf.onDesk(ctx, in.Intent, in.Code, creq.OnToolCall)
	defer offDesk()
	start := time.Now()
	resp := sf.engine.Execute(ctx, creq)
	res := textResult(resp.Render(), resp.IsError)
	if resp.Record != nil {
		// The response names the record only when the store kept it; a
		// full store says so (isogate/run_not_kept: STORE_FULL: ...).
		if err := sf.KeepRun(creq.Owner, resp.Record); err != nil {
			res.Meta = mcp.Meta{"isogate/run_not_kept": err.Error()}
		} else {
			res.Meta = mcp.Meta{"isogate/run": resp.Record.ID}
		}
		sf.desk.KeepRecord(principalName(ctx), resp.Record)
	}
	if resp.IsError && resp.Code != "" {
		// The run's error code as data, as for a refused passthrough call:
		// a client branches on it without reading the text.
		if res.Meta == nil {
			res.Meta = mcp.Meta{}
		}
		res.Meta["isogate/code"] = string(resp.Code)
	}
	sf.auditRun(ctx, resp.Record, resp.IsError, time.Since(start))
	return res
}

// KeepRun keeps a run record for owner as isogate://runs/{id} and writes
// it to server.record_dir when that is set; it returns why the store did
// not keep it (an error wrapping resultstore.ErrFull at store.max_bytes).
func (sf *Surface) KeepRun(owner string, rec *pipeline.RunRecord) error {
	return sf.runs.put(context.Background(), owner, rec, sf.logger)
}

func (sf *Surface) addResources(s *mcp.Server) {
	jsonResource := func(uri string, v any) (*mcp.ReadResourceResult, error) {
		b, err := json.MarshalIndent(v, "", "  ")
		if err != nil {
			return nil, err
		}
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: uri, MIMEType: "application/json", Text: string(b)}}}, nil
	}
	s.AddResource(&mcp.Resource{URI: "isogate://backends", Name: "backends", MIMEType: "application/json",
		Description: "Every backend: name, state, tool count, last error, clients' own sessions, tool and prompt names it shares with other backends."},
		func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			type row struct {
				Name           string          `json:"name"`
				Transport      string          `json:"transport"`
				State          string          `json:"state"`
				ToolCount      int             `json:"tool_count"`
				ToolsCached    bool            `json:"tools_cached"`
				Restarts       int             `json:"restarts"`
				LastError      string          `json:"last_error,omitempty"`
				ClientSessions int             `json:"client_sessions"`
				NameCollisions []NameCollision `json:"name_collisions,omitempty"`
			}
			rows := []row{}
			for _, st := range sf.manager.Status() {
				rows = append(rows, row{st.Name, st.Transport, st.State.String(), st.ToolCount, st.ToolsCached, st.Restarts, st.LastError,
					st.ClientSessions, sf.collisions.of(st.Name)})
			}
			return jsonResource(req.Params.URI, rows)
		})
	s.AddResourceTemplate(&mcp.ResourceTemplate{URITemplate: "isogate://backend/{name}", Name: "backend", MIMEType: "application/json",
		Description: "One backend: status, tools and recent stderr lines."},
		func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			name := strings.TrimPrefix(req.Params.URI, "isogate://backend/")
			for _, st := range sf.manager.Status() {
				if st.Name != name {
					continue
				}
				var tools []string
				for _, t := range sf.policy.Filter(name, sf.manager.Tools()[name]) {
					tools = append(tools, t.Name)
				}
				if p := principalOf(req); p != nil && !p.Matches(sf.opts.Auth.Admins) {
					// A backend's stderr may hold what it was sent for
					// another principal; its PID is the operator's.
					st.Stderr, st.PID = nil, 0
				}
				return jsonResource(req.Params.URI, struct {
					Status any      `json:"status"`
					Tools  []string `json:"tools"`
				}{st, tools})
			}
			return nil, mcp.ResourceNotFoundError(req.Params.URI)
		})
	s.AddResource(&mcp.Resource{URI: "isogate://stats", Name: "stats", MIMEType: "application/json",
		Description: "Your usage: tool calls per tool, code-mode runs per tier, bytes returned vs processed (gateway-wide for server.auth.admins)."},
		func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			type statsView struct {
				stats.Snapshot
				Sandbox *SandboxReport `json:"sandbox,omitempty"`
				// Repointed are the plain names that now reach another
				// backend (as /readyz reports them).
				Repointed []Repoint `json:"repointed_names,omitempty"`
			}
			view := statsView{Snapshot: sf.observer.CallerStats(sf.ownerOf(req)), Sandbox: sf.sandboxReport().brief()}
			view.Repointed, _ = sf.Repointed()
			if principalOf(req).Matches(sf.opts.Auth.Admins) {
				view.Snapshot = sf.observer.Stats().Snapshot()
				view.Sandbox = sf.sandboxReport()
			}
			return jsonResource(req.Params.URI, view)
		})
	s.AddResource(&mcp.Resource{URI: "isogate://tools", Name: "tools", MIMEType: "text/plain",
		Description: "Compact index of every tool: one line each, name and summary."},
		func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, MIMEType: "text/plain", Text: sf.catalog.Index()}}}, nil
		})
	sf.addResultAccess(s)
	s.AddResourceTemplate(&mcp.ResourceTemplate{URITemplate: RunURIPrefix + "{id}", Name: "run", MIMEType: "application/json",
		Description: "What one call_tool_chain run did: program, outcome, console and every backend call with its timing (id from the result's _meta isogate/run)."},
		func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			id := strings.TrimPrefix(req.Params.URI, RunURIPrefix)
			text, ok := sf.runs.get(ctx, sf.ownerOf(req), id)
			if !ok {
				return nil, fmt.Errorf("%w (run records are kept for %v)", mcp.ResourceNotFoundError(req.Params.URI), sf.runs.store.Limits().TTL)
			}
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, MIMEType: "application/json", Text: text}}}, nil
		})
}
