package surface

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/isogate/isogate/config"
	"github.com/isogate/isogate/internal/catalog"
	"github.com/isogate/isogate/internal/pipeline"
)

// unknownToolMiddleware answers a tools/call of a name the server does not
// list (the go-sdk's `unknown tool "x"`) as the catalogue answers "what is
// this name?" (catalog.Catalog.What, with the caller's own
// server.auth.rules): a tool policy denies is a refused call (a tool error
// with _meta["isogate/code"] TOOL_DENIED naming the rule); a tool listed
// under another name, or offered by several backends, points at the names
// it is listed as (its prefixed forms); an unknown name gets did-you-mean
// over the tools the caller may call. On a server that lists no backend
// tool (server.expose: meta), a backend tool is pointed at call_tool_chain.
func (sf *Surface) unknownToolMiddleware(expose config.Expose) mcp.Middleware {
	listing := expose == config.ExposePassthrough || expose == config.ExposeBoth
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			res, err := next(ctx, method, req)
			call, ok := req.(*mcp.CallToolRequest)
			if err == nil || method != "tools/call" || !ok || call.Params == nil {
				return res, err
			}
			var rpc *jsonrpc.Error
			name := call.Params.Name
			if !errors.As(err, &rpc) || rpc.Message != fmt.Sprintf("unknown tool %q", name) {
				return res, err
			}
			if answer, refused := sf.whatTool(ctx, name, listing); refused != nil {
				return refused, nil
			} else if answer != "" {
				return res, &jsonrpc.Error{Code: rpc.Code, Message: rpc.Message + ": " + answer, Data: rpc.Data}
			}
			return res, err
		}
	}
}

// whatTool is what unknownToolMiddleware says of a name: a refused call's
// result for a denied tool, else the sentence that follows
// `unknown tool "x": `, "" for nothing to add.
func (sf *Surface) whatTool(ctx context.Context, name string, listing bool) (string, *mcp.CallToolResult) {
	opts := catalog.Options{Suggest: true, DeniedBy: sf.policy.DeniedTo(ctx)}
	e, err := sf.catalog.What(name, opts)
	var nf *catalog.NotFoundError
	if errors.As(err, &nf) {
		// A prefixed passthrough name: <backend>__<tool>.
		if b, t, ok := strings.Cut(name, "__"); ok {
			if e2, err2 := sf.catalog.What(b+"."+t, opts); !errors.As(err2, &nf) {
				e, err = e2, err2
			}
		}
	}
	var denied *catalog.DeniedError
	var amb *catalog.AmbiguousError
	switch {
	case errors.As(err, &denied):
		r := textResult(string(pipeline.CodeToolDenied)+": "+denied.Error(), true)
		r.Meta = mcp.Meta{"isogate/code": string(pipeline.CodeToolDenied)}
		return "", r
	case errors.As(err, &amb):
		return "several backends offer it; " + listedAs(sf.callNames(amb.Candidates, listing), listing), nil
	case errors.As(err, &nf):
		if len(nf.Suggestions) == 0 {
			return "", nil
		}
		return "did you mean " + strings.Join(sf.callNames(nf.Suggestions, listing), " or ") + "?", nil
	case e != nil:
		return listedAs(sf.callNames([]string{e.Name}, listing), listing), nil
	}
	return "", nil
}

// listedAs says how the names are called.
func listedAs(names []string, listing bool) string {
	if listing {
		return "it is listed as " + strings.Join(names, " or ")
	}
	return "call it in call_tool_chain as " + strings.Join(names, " or ")
}

// callNames names catalogue tools ("backend.tool") as the caller can call
// them: their passthrough names, quoted, when the server lists backend
// tools, else their code-mode names.
func (sf *Surface) callNames(names []string, listing bool) []string {
	quoted := make([]string, 0, len(names))
	for _, n := range names {
		if e, err := sf.catalog.Resolve(n); err == nil {
			if l := sf.passthrough.listedName(e.Backend, e.Tool); listing && l != "" {
				quoted = append(quoted, fmt.Sprintf("%q", l))
				continue
			}
			quoted = append(quoted, "`"+e.JSName+"`")
			continue
		}
		quoted = append(quoted, n)
	}
	return quoted
}

// listedName is the passthrough name of backend's tool, "" when it is
// not listed.
func (p *passthrough) listedName(backend, tool string) string {
	p.mu.Lock()
	defer p.mu.Unlock()
	for name, o := range p.origins {
		if o.backend == backend && o.name == tool {
			return name
		}
	}
	return ""
}
