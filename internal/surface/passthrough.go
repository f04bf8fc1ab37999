package surface

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"slices"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/isogate/isogate/internal/approvals"
	"github.com/isogate/isogate/internal/catalog"
	"github.com/isogate/isogate/internal/codemode/output"
	"github.com/isogate/isogate/internal/pipeline"
	"github.com/isogate/isogate/v8sandbox"
)

// MaxPassthroughName is the longest passthrough tool name: several model
// APIs accept only ^[a-zA-Z0-9_-]{1,64}$.
const MaxPassthroughName = 64

// passthroughHashLen is the length of the hash suffix that tells colliding
// or overlong passthrough names apart.
const passthroughHashLen = 8

// PassthroughName returns the name of a backend tool when passed through:
// "<backend>__<tool>" with every character outside [A-Za-z0-9_-] replaced
// by '_'. It does not resolve collisions or length: see PassthroughNames.
func PassthroughName(backend, tool string) string {
	return sanitizeToolName(backend + "__" + tool)
}

func sanitizeToolName(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		if r == '_' || r == '-' || (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') || (r >= '0' && r <= '9') {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	return b.String()
}

// hashedName cuts name to leave room for "_" and a short hash of the
// original backend and tool names.
func hashedName(name, backend, tool string) string {
	sum := sha256.Sum256([]byte(backend + "\x00" + tool))
	h := hex.EncodeToString(sum[:])[:passthroughHashLen]
	if max := MaxPassthroughName - passthroughHashLen - 1; len(name) > max {
		name = name[:max]
	}
	return name + "_" + h
}

// PassthroughNames names every entry for passthrough, deterministically:
// a name that is short enough and claimed by one tool whose original
// "<backend>__<tool>" it equals (or, failing that, by the first tool in
// backend, tool order) is kept; every other tool sharing it, and every
// overlong name, gets a suffix "_" + 8 hex digits of a hash of its original
// backend and tool names.
func PassthroughNames(entries []*catalog.Entry) map[*catalog.Entry]string {
	pairs := make([]namePair, len(entries))
	for i, e := range entries {
		pairs[i] = namePair{e.Backend, e.Tool}
	}
	names := uniqueNames(pairs)
	out := make(map[*catalog.Entry]string, len(entries))
	for i, e := range entries {
		out[e] = names[pairs[i]]
	}
	return out
}

// namePair is a backend and the original name of one of its tools or prompts.
type namePair struct{ backend, name string }

// uniqueNames gives each pair its passthrough name (see PassthroughNames).
func uniqueNames(pairs []namePair) map[namePair]string {
	groups := map[string][]namePair{}
	for _, p := range pairs {
		n := PassthroughName(p.backend, p.name)
		groups[n] = append(groups[n], p)
	}
	out := make(map[namePair]string, len(pairs))
	for n, ps := range groups {
		slices.SortFunc(ps, func(a, b namePair) int {
			if c := strings.Compare(a.backend, b.backend); c != 0 {
				return c
			}
			return strings.Compare(a.name, b.name)
		})
		keep := -1
		if len(n) <= MaxPassthroughName {
			keep = 0
			for i, p := range ps {
				if p.backend+"__"+p.name == n {
					keep = i
					break
				}
			}
		}
		for i, p := range ps {
			if i == keep {
				out[p] = n
			} else {
				out[p] = hashedName(n, p.backend, p.name)
			}
		}
	}
	return out
}

// passthrough keeps every allowed backend tool listed, named as
// server.tool_names says (see naming.assign), on the servers that expose
// them, and routes their calls through the call pipeline.
type passthrough struct {
	catalog *catalog.Catalog
	handler func(backend, tool string) mcp.ToolHandler // calls one backend tool
	mu      sync.Mutex
	servers []*mcp.Server
	listed  map[string]string   // name → fingerprint of the listed definition
	origins map[string]namePair // name → the backend tool it lists

	naming     naming          // server.tool_names and the backends' priorities
	collisions *nameCollisions // tool names backends share
}

// attach adds a server that lists passthrough tools.
func (p *passthrough) attach(s *mcp.Server) {
	p.mu.Lock()
	p.servers = append(p.servers, s)
	p.mu.Unlock()
	p.sync()
}

// sync brings the listed tools in line with the catalogue (which holds only
// tools the policy allows). The SDK tells connected clients with
// notifications/tools/list_changed.
func (p *passthrough) sync() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.servers) == 0 {
		return
	}
	if p.listed == nil {
		p.listed = map[string]string{}
	}
	entries := p.catalog.Entries()
	names, collisions := ToolNames(entries, p.naming.mode, p.naming.priority, p.naming.order)
	p.collisions.set(KindTool, collisions)
	plain := map[string]string{}
	for _, e := range entries {
		if names[e] == e.Tool {
			plain[e.Tool] = e.Backend
		}
	}
	p.collisions.served(KindTool, plain)
	want := map[string]bool{}
	origins := map[string]namePair{}
	for _, e := range entries {
		name := names[e]
		want[name] = true
		origins[name] = namePair{e.Backend, e.Tool}
		t := passthroughTool(name, e.Def)
		fp, _ := json.Marshal(struct {
			T       *mcp.Tool
			B, Tool string
		}{t, e.Backend, e.Tool})
		if p.listed[name] == string(fp) {
			continue
		}
		p.listed[name] = string(fp)
		h := p.handler(e.Backend, e.Tool)
		for _, s := range p.servers {
			s.AddTool(t, h)
		}
	}
	p.origins = origins
	var stale []string
	for name := range p.listed {
		if !want[name] {
			stale = append(stale, name)
			delete(p.listed, name)
		}
	}
	if len(stale) > 0 {
		for _, s := range p.servers {
			s.RemoveTools(stale...)
		}
	}
}

// passthroughTool is the definition a client sees: the backend's title,
// description, schemas and annotations (shown, not trusted: the policy
// still decides) under the passthrough name.
func passthroughTool(name string, def *mcp.Tool) *mcp.Tool {
	t := &mcp.Tool{Name: name, Title: def.Title, Description: def.Description, Annotations: def.Annotations, Meta: def.Meta}
	t.InputSchema = clientSafeSchema(rawSchema(def.InputSchema), true)
	if out := clientSafeSchema(rawSchema(def.OutputSchema), false); out != nil {
		t.OutputSchema = out
	}
	return t
}

func rawSchema(v any) json.RawMessage {
	switch v := v.(type) {
	case nil:
		return nil
	case json.RawMessage:
		return v
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil
	}
	return b
}

// clientSafeSchema makes a backend schema acceptable to strict clients (the
// TypeScript SDK validates tools/list with zod): the root must be an
// object schema with "type": "object", and every property schema an
// object, so boolean sub-schemas become {} (true) or {"not": {}} (false).
// An input schema that cannot be read becomes {"type": "object"}; an
// output schema that is not an object schema is dropped (nil).
func clientSafeSchema(raw json.RawMessage, input bool) json.RawMessage {
	var m map[string]any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if len(raw) == 0 || dec.Decode(&m) != nil || m == nil {
		if input {
			return json.RawMessage(`{"type":"object"}`)
		}
		return nil
	}
	switch ty := m["type"].(type) {
	case nil:
		if !input {
			return nil
		}
		m["type"] = "object"
	case string:
		if ty != "object" {
			if !input {
				return nil
			}
			m = map[string]any{"type": "object"}
		}
	default:
		if !input {
			return nil
		}
		m = map[string]any{"type": "object"}
	}
	objectProperties(m, 0)
	b, err := json.Marshal(m)
	if err != nil {
		return json.RawMessage(`{"type":"object"}`)
	}
	return b
}

// objectProperties replaces boolean property schemas with object ones, at
// every depth (bounded).
func objectProperties(v any, depth int) {
	if depth > 64 {
		return
	}
	switch v := v.(type) {
	case map[string]any:
		if props, ok := v["properties"].(map[string]any); ok {
			for k, p := range props {
				if b, ok := p.(bool); ok {
					if b {
						props[k] = map[string]any{}
					} else {
						props[k] = map[string]any{"not": map[string]any{}}
					}
				}
			}
		} else if _, present := v["properties"]; present {
			delete(v, "properties")
		}
		for _, c := range v {
			objectProperties(c, depth+1)
		}
	case []any:
		for _, c := range v {
			objectProperties(c, depth+1)
		}
	}
}

// handler calls one backend tool through the call pipeline (policy,
// approval, record, stats, manager) and returns the backend's result
// unchanged, or shaped when server.passthrough_shaping is on.
func (sf *Surface) passthroughHandler(listedBackend, listedTool string) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		backendName, tool, moved := sf.settleStartingName(ctx, req.Params.Name, listedBackend, listedTool)
		if moved != nil {
			return moved, nil
		}
		call := &pipeline.Call{Backend: backendName, Tool: tool, Args: req.Params.Arguments}
		ask, approver := sf.rounds.Passthrough(req, call)
		if ask != nil {
			return ask, nil
		}
		if _, given := approver.(approvals.Answered); !given {
			approver = sf.desk.Approver(approver, principalName(ctx), "") // the console may answer too
		}
		ctx = sf.forward.WithAnswerer(pipeline.WithApprover(ctx, approver), req.Session)
		flight := sf.forward.Begin(ctx, req, call) // progress and logs back to this client
		res, err := sf.calls.Call(ctx, call)
		flight.End()
		if err != nil || res.IsError {
			if missing := flight.MissingCapability(); missing != nil {
				return nil, missing
			}
		}
		if err != nil {
			if rpc := approvals.BackendProtocolError(req, err); rpc != nil {
				return nil, rpc
			}
			r := textResult(err.Error(), true)
			// A refusal's code or the backend manager's (BACKEND_BUSY,
			// BACKEND_UNAVAILABLE, ...), as a program's call would see it;
			// none for an error the backend answered itself.
			if code := v8sandbox.CodeOf(err); code != "" {
				r.Meta = mcp.Meta{"isogate/code": string(code)}
			}
			return r, nil
		}
		sf.rounds.NoteBackendRound(req, call, res)
		if sf.opts.PassthroughDropDuplicateText {
			res = dropDuplicateText(res)
		}
		if sf.opts.PassthroughShaping {
			sf.shape(ctx, req, res)
		}
		return res, nil
	}
}

// shape runs every text content of a result through the output pipeline;
// what a stage removes stays readable as isogate://result/{id}.
func (sf *Surface) shape(ctx context.Context, req *mcp.CallToolRequest, res *mcp.CallToolResult) {
	opts := sf.opts.Output
	opts.IntentFilter = false // passthrough calls carry no intent
	opts.Owner = sf.ownerOf(req)
	for i, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			shaped := output.Shape(ctx, tc.Text, "", opts, sf.store)
			res.Content[i] = &mcp.TextContent{Text: shaped.Text, Annotations: tc.Annotations, Meta: tc.Meta}
		}
	}
}

// origin returns the backend tool a passthrough name lists.
func (p *passthrough) origin(name string) (backend, tool string, ok bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	o, ok := p.origins[name]
	return o.backend, o.name, ok
}
