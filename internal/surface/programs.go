package surface

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/isogate/isogate/config"
	"github.com/isogate/isogate/internal/authn"
	"github.com/isogate/isogate/internal/pipeline"
	"github.com/isogate/isogate/internal/programs"
	"github.com/isogate/isogate/v8sandbox"
)

// Saved programs on the surface (issue 45): the meta-tools save_program
// and programs (list, versions, set_current, publish); each program the
// caller may call listed in tools/list as program_<name>; a tools/call of
// one runs its code as call_tool_chain would run it, under the caller's
// principal, with the same policy, approvals, journal, run record, limits
// and tasks.

// programSurface is what the surface keeps of saved programs.
type programSurface struct {
	programs *programs.Programs // nil: saved programs off
	mu       sync.Mutex
	touch    []func() // re-adds a tool on each server: the SDK then sends tools/list_changed
}

// ProgramsChanged tells every session that tools/list changed (a program
// was saved, made current or published).
func (sf *Surface) ProgramsChanged() {
	sf.programs.mu.Lock()
	touch := sf.programs.touch
	sf.programs.mu.Unlock()
	for _, t := range touch {
		t()
	}
}

// isProgramTool reports whether name is a saved program's tool name.
func (sf *Surface) isProgramTool(name string) bool {
	return sf.programs.programs != nil && strings.HasPrefix(name, programs.ToolPrefix)
}

// programCaller is who calls, for the programs package.
func (sf *Surface) programCaller(ctx context.Context) programs.Caller {
	p := authn.FromContext(ctx)
	return programs.Caller{Principal: p, Admin: p == nil || p.Matches(sf.opts.Auth.Admins)}
}

// The meta-tools' descriptions and schemas are every client's context
// (gateway TestMetaToolListFitsContextBudget): each word earns its place.
type saveProgramInput struct {
	Name        string `json:"name" jsonschema:"e.g. weekly_report"`
	Description string `json:"description"`
	Code        string `json:"code" jsonschema:"as in call_tool_chain; reads args"`
	Parameters  any    `json:"parameters,omitempty"`
}

type programsInput struct {
	Action  string   `json:"action,omitempty"`
	Name    string   `json:"name,omitempty"`
	Version int      `json:"version,omitempty"`
	Owner   string   `json:"owner,omitempty"`
	To      []string `json:"to,omitempty" jsonschema:"names, group:g, scope:s, *; [] withdraws"`
}

// attachPrograms adds the saved programs' meta-tools to s (not on a
// passthrough-only server) and the middleware that lists and calls them.
func (sf *Surface) attachPrograms(s *mcp.Server, expose config.Expose) {
	if sf.programs.programs == nil || expose == config.ExposePassthrough {
		return
	}
	s.AddReceivingMiddleware(sf.programsMiddleware)
	mcp.AddTool(s, &mcp.Tool{Name: "save_program", InputSchema: saveProgramSchema(),
		Description: "Save a working program as tool program_NAME (description: when to use it); versioned, private until published."},
		sf.saveProgram)
	listTool := &mcp.Tool{Name: "programs", InputSchema: programsSchema(),
		Description: "Saved programs. action: list (default), versions, set_current, publish (admins)."}
	mcp.AddTool(s, listTool, sf.programsTool)
	sf.programs.mu.Lock()
	sf.programs.touch = append(sf.programs.touch, func() { mcp.AddTool(s, listTool, sf.programsTool) })
	sf.programs.mu.Unlock()
}

// programsTool serves the programs meta-tool's actions.
func (sf *Surface) programsTool(ctx context.Context, _ *mcp.CallToolRequest, in programsInput) (*mcp.CallToolResult, any, error) {
	switch in.Action {
	case "", "list":
		return sf.listPrograms(ctx, "")
	case "versions":
		return sf.listPrograms(ctx, in.Name)
	case "set_current":
		return sf.setProgramVersion(ctx, in.Name, in.Version)
	case "publish":
		return sf.publishProgram(ctx, in)
	}
	return programError(v8sandbox.Errorf(programs.CodeInvalid, "action %s: list, versions, set_current or publish", programs.Quote(in.Action))), nil, nil
}

// saveProgramSchema is save_program's input schema: its parameters are a
// schema object or a signature string (an object sub-schema either way:
// MCP clients refuse boolean ones).
func saveProgramSchema() *jsonschema.Schema {
	s, err := jsonschema.For[saveProgramInput](nil)
	if err != nil {
		panic(err) // a fixed struct
	}
	s.Properties["parameters"] = &jsonschema.Schema{Types: []string{"object", "string"},
		Description: "JSON Schema or TS type; default: from args reads"}
	s.AdditionalProperties = nil // unknown properties are ignored: bytes every client reads, for nothing
	return s
}

// programsSchema is the programs meta-tool's input schema, as small as
// it stays clear.
func programsSchema() *jsonschema.Schema {
	s, err := jsonschema.For[programsInput](nil)
	if err != nil {
		panic(err) // a fixed struct
	}
	s.Properties["to"].Types, s.Properties["to"].Type = nil, "array"
	s.AdditionalProperties = nil
	return s
}

// programError is the tool error of a coded failure.
func programError(err error) *mcp.CallToolResult {
	r := textResult(err.Error(), true)
	if code := v8sandbox.CodeOf(err); code != "" {
		r.Meta = mcp.Meta{"isogate/code": string(code)}
	}
	return r
}

func (sf *Surface) saveProgram(ctx context.Context, req *mcp.CallToolRequest, in saveProgramInput) (*mcp.CallToolResult, any, error) {
	// With server.auth.approval_at_save the saver may be asked to approve
	// the program's plan (app's vetter).
	ctx = pipeline.WithApprover(ctx, pipeline.ElicitApprover{Session: req.Session})
	var params json.RawMessage
	if in.Parameters != nil {
		params, _ = json.Marshal(in.Parameters)
	}
	v, err := sf.programs.programs.Save(ctx, sf.programCaller(ctx), programs.SaveInput{
		Name: in.Name, Description: in.Description, Code: in.Code, Params: params})
	if err != nil {
		return programError(err), nil, nil
	}
	text := fmt.Sprintf("saved %s (current); call it as the tool %s", v.Ref(), programs.ToolName(v.Name))
	if len(v.Calls) > 0 {
		text += "; it calls " + strings.Join(v.Calls, ", ")
	}
	if v.Approved != nil {
		text += "; its plan was approved for your later calls of " + v.Ref()
	}
	if missing := sf.missingPrograms(ctx, in.Code); len(missing) > 0 {
		text += fmt.Sprintf("; note: it calls %s, which you have no program of: its runs fail there until you save one", strings.Join(missing, ", "))
	}
	res := textResult(text, false)
	res.StructuredContent = map[string]any{"name": v.Name, "version": v.Version, "tool": programs.ToolName(v.Name),
		"calls": v.Calls, "parameters": v.Params}
	return res, nil, nil
}

// missingPrograms are the programs.<name> that code calls and the caller
// has no program of (neither its own nor published to it, and not denied
// to it): saved all the same (it may be saved next), but said at save.
func (sf *Surface) missingPrograms(ctx context.Context, code string) []string {
	names := programs.Names(code)
	if len(names) == 0 {
		return nil
	}
	deniedTo := sf.policy.DeniedTo(ctx)
	c := sf.programCaller(ctx)
	var out []string
	for _, n := range names {
		base, _, _ := strings.Cut(n, "@")
		if deniedTo(programs.PolicyBackend, base) != "" {
			continue
		}
		if _, err := sf.programs.programs.Resolve(ctx, c, n); v8sandbox.CodeOf(err) == programs.CodeNotFound {
			out = append(out, "programs."+n)
		}
	}
	return out
}

func (sf *Surface) listPrograms(ctx context.Context, name string) (*mcp.CallToolResult, any, error) {
	c := sf.programCaller(ctx)
	if name != "" {
		head, versions, err := sf.programs.programs.Versions(ctx, c, "", name)
		if err != nil {
			return programError(err), nil, nil
		}
		var b strings.Builder
		fmt.Fprintf(&b, "%s: current version %d of %d", head.Name, head.Current, head.Latest)
		if pub := head.Published; pub != nil {
			fmt.Fprintf(&b, "; version %d published to %s by %s", pub.Version, strings.Join(pub.To, ", "), pub.By)
		}
		for _, v := range versions {
			fmt.Fprintf(&b, "\n- %s (%s): %s", v.Ref(), v.SavedAt.Format("2006-01-02 15:04:05Z"), v.Description)
		}
		return textResult(b.String(), false), nil, nil
	}
	list, err := sf.programs.programs.List(ctx, c)
	if err != nil {
		return programError(err), nil, nil
	}
	if len(list) == 0 {
		return textResult("no saved programs (save_program saves one)", false), nil, nil
	}
	var b strings.Builder
	for _, l := range list {
		fmt.Fprintf(&b, "- %s@%d (tool %s", l.Name, l.Version, programs.ToolName(l.Name))
		if !l.Own {
			fmt.Fprintf(&b, ", published by %s's owner %s", l.Name, l.Owner)
		}
		fmt.Fprintf(&b, "): %s\n", l.Description)
	}
	return textResult(strings.TrimSuffix(b.String(), "\n"), false), nil, nil
}

func (sf *Surface) setProgramVersion(ctx context.Context, name string, version int) (*mcp.CallToolResult, any, error) {
	if err := sf.programs.programs.SetCurrent(ctx, sf.programCaller(ctx), name, version); err != nil {
		return programError(err), nil, nil
	}
	return textResult(fmt.Sprintf("%s@%d is current", name, version), false), nil, nil
}

func (sf *Surface) publishProgram(ctx context.Context, in programsInput) (*mcp.CallToolResult, any, error) {
	c := sf.programCaller(ctx)
	ver := in.Version
	if ver == 0 && len(in.To) > 0 && c.Admin { // a non-admin is refused by Publish
		head, _, err := sf.programs.programs.Versions(ctx, c, in.Owner, in.Name)
		if err != nil {
			return programError(err), nil, nil
		}
		ver = head.Current
	}
	if err := sf.programs.programs.Publish(ctx, c, in.Owner, in.Name, ver, in.To); err != nil {
		return programError(err), nil, nil
	}
	if len(in.To) == 0 {
		return textResult(in.Name+" is no longer published", false), nil, nil
	}
	return textResult(fmt.Sprintf("%s@%d is published to %s", in.Name, ver, strings.Join(in.To, ", ")), false), nil, nil
}

// programInfo answers tool_info for a saved program the caller may call,
// named as listed (program_<name>) or as programs call it
// (programs.<name>): the tool's description and its parameters. nil when
// the name is no such program (or the store did not answer): tool_info
// then answers as for any unknown name.
func (sf *Surface) programInfo(ctx context.Context, name string) *mcp.CallToolResult {
	if sf.programs.programs == nil {
		return nil
	}
	base, ok := strings.CutPrefix(name, programs.ToolPrefix)
	if !ok {
		if base, ok = strings.CutPrefix(name, "programs."); !ok {
			return nil
		}
	}
	if sf.policy.DeniedTo(ctx)(programs.PolicyBackend, base) != "" {
		return nil
	}
	l, err := sf.programs.programs.Lookup(ctx, sf.programCaller(ctx), base)
	if err != nil || l == nil {
		return nil
	}
	t := programTool(*l)
	params := string(l.Params)
	if params == "" {
		params = "{}"
	}
	return textResult(fmt.Sprintf("%s — %s\nParameters (JSON Schema): %s\nCall it as the tool %s, or in call_tool_chain as `await programs.%s(args)`.",
		t.Name, t.Description, params, t.Name, l.Name), false)
}

// programTool is the tool a listed program is.
func programTool(l programs.Listed) *mcp.Tool {
	desc := l.Description
	if len(l.Calls) > 0 {
		desc += "\n\nCalls " + strings.Join(l.Calls, ", ")
		if l.Partial {
			desc += " and possibly other tools"
		}
		desc += "."
	}
	desc += fmt.Sprintf("\n\n(saved program %s@%d", l.Name, l.Version)
	if !l.Own {
		desc += ", published by " + l.Owner
	}
	desc += "; in call_tool_chain: await programs." + l.Name + "(args))"
	return &mcp.Tool{Name: programs.ToolName(l.Name), Description: desc, InputSchema: l.Params,
		Annotations: &mcp.ToolAnnotations{DestructiveHint: jsonschema.Ptr(true), OpenWorldHint: jsonschema.Ptr(true)}}
}

// programsMiddleware lists the caller's programs in tools/list (after the
// other tools, on the last page) and refuses a tools/call of one that
// programCallsMiddleware could not resolve.
func (sf *Surface) programsMiddleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		switch method {
		case "tools/list":
			res, err := next(ctx, method, req)
			r, ok := res.(*mcp.ListToolsResult)
			if err != nil || !ok || r == nil || r.NextCursor != "" {
				return res, err
			}
			list, lerr := sf.programs.programs.List(ctx, sf.programCaller(ctx))
			if lerr != nil {
				// Listing is no guard: the other tools are listed, and a
				// call of a program fails closed with the store's code.
				sf.logger.Warn("saved programs are not listed", "err", lerr)
				return res, nil
			}
			out := *r
			out.Tools = append(make([]*mcp.Tool, 0, len(r.Tools)+len(list)), r.Tools...)
			deniedTo := sf.policy.DeniedTo(ctx)
			for _, l := range list {
				if deniedTo(programs.PolicyBackend, l.Name) == "" {
					out.Tools = append(out.Tools, programTool(l))
				}
			}
			return &out, nil
		case "tools/call":
			call, ok := req.(*mcp.CallToolRequest)
			if !ok || call.Params == nil || !sf.isProgramTool(call.Params.Name) {
				break
			}
			if _, _, listed := sf.passthrough.origin(call.Params.Name); listed {
				break // a backend tool passed through under that name
			}
			// programCallsMiddleware made every call it could resolve a
			// call_tool_chain call: this one is refused (again, now, so
			// that a task asked for carries the refusal).
			name := strings.TrimPrefix(call.Params.Name, programs.ToolPrefix)
			if _, refused := sf.programCode(ctx, name, call.Params.Arguments); refused != nil {
				return refused, nil
			}
			if chain := sf.programChainCall(ctx, call); chain != nil { // resolved meanwhile
				return next(withCalledProgram(ctx, name, call.Params.Arguments), method, chain)
			}
		}
		return next(ctx, method, req)
	}
}

// programCode is the program a call of name with arguments runs, or the
// result that refuses the call: the caller's policy (server.auth.rules
// naming programs.<name>), the program unknown to the caller, arguments
// its parameters refuse.
func (sf *Surface) programCode(ctx context.Context, name string, arguments json.RawMessage) (string, *mcp.CallToolResult) {
	if rule := sf.policy.DeniedTo(ctx)(programs.PolicyBackend, name); rule != "" {
		return "", programError(v8sandbox.Errorf(pipeline.CodeToolDenied, "%s.%s is denied by %s", programs.PolicyBackend, name, rule))
	}
	v, err := sf.programs.programs.Resolve(ctx, sf.programCaller(ctx), name)
	if err != nil {
		return "", programError(err)
	}
	code, err := programs.CallCode(v, arguments)
	if err != nil {
		return "", programError(err)
	}
	return code, nil
}
