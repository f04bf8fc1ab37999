package surface

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// maxCompletionValues is the most values a completion carries (the spec's
// bound); more are cut and marked hasMore.
const maxCompletionValues = 100

// route is where an aggregated prompt or resource (template) comes from:
// its backend and, for a prompt, its original name.
type route struct{ backend, name string }

// noteRoute remembers the route of an item register lists ("p:<shown
// name>", "r:<uri>", "t:<template>"). A route counts only while its key is
// listed (see routeOf), so stale entries need no cleanup. a.mu is held.
func (a *aggregate) noteRoute(key, owner string, def any) {
	if a.routes == nil {
		a.routes = map[string]route{}
	}
	r := route{backend: owner}
	if p, ok := def.(*mcp.Prompt); ok {
		r.name = p.Name
	}
	a.routes[key] = r
}

// routeOf returns the route of a listed item.
func (a *aggregate) routeOf(key string) (route, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if _, listed := a.listed[key]; !listed {
		return route{}, false
	}
	r, ok := a.routes[key]
	return r, ok
}

// complete answers completion/complete: a prompt reference goes to the
// backend that owns the prompt, under its original name; a resource
// reference (a URI template or a URI) to the backend that owns it. A
// backend without completions gives an empty completion; a reference to no
// prompt or resource the gateway lists is invalid params (-32602), as the
// spec asks. isogate's own template isogate://backend/{name} completes
// backend names.
func (sf *Surface) complete(ctx context.Context, req *mcp.CompleteRequest) (*mcp.CompleteResult, error) {
	p := req.Params
	ref := p.Ref
	var key string
	switch ref.Type {
	case "ref/prompt":
		key = "p:" + ref.Name
	case "ref/resource":
		if res, ok := sf.completeOwn(ref.URI, p.Argument); ok {
			return res, nil
		}
		key = "t:" + ref.URI
		if _, ok := sf.aggregate.routeOf(key); !ok {
			key = "r:" + ref.URI
		}
	default:
		return nil, &jsonrpc.Error{Code: codeInvalidParams, Message: fmt.Sprintf("unknown reference type %q", ref.Type)}
	}
	r, ok := sf.aggregate.routeOf(key)
	if !ok {
		what := "prompt " + ref.Name
		if ref.Type == "ref/resource" {
			what = "resource " + ref.URI
		}
		return nil, &jsonrpc.Error{Code: codeInvalidParams, Message: "completion for an unknown " + what}
	}
	ctx, cancel := context.WithTimeout(ctx, aggregateTimeout)
	defer cancel()
	sess, err := sf.manager.Session(ctx, r.backend)
	if err != nil {
		return nil, err
	}
	if ir := sess.InitializeResult(); ir == nil || ir.Capabilities == nil || ir.Capabilities.Completions == nil {
		return emptyCompletion(), nil
	}
	out := &mcp.CompleteReference{Type: ref.Type, URI: ref.URI}
	if ref.Type == "ref/prompt" {
		out.Name = r.name
	}
	res, err := sess.Complete(ctx, &mcp.CompleteParams{Argument: p.Argument, Context: p.Context, Ref: out})
	if err != nil {
		var rpc *jsonrpc.Error
		if errors.As(err, &rpc) && rpc.Code == jsonrpc.CodeMethodNotFound {
			return emptyCompletion(), nil
		}
		return nil, err
	}
	return boundCompletion(res), nil
}

// completeOwn completes the arguments of isogate's own resource templates.
func (sf *Surface) completeOwn(uri string, arg mcp.CompleteParamsArgument) (*mcp.CompleteResult, bool) {
	if !strings.HasPrefix(strings.ToLower(uri), "isogate:") {
		return nil, false
	}
	res := emptyCompletion()
	if uri == "isogate://backend/{name}" && arg.Name == "name" {
		for _, name := range sf.manager.Backends() {
			if strings.HasPrefix(name, arg.Value) {
				res.Completion.Values = append(res.Completion.Values, name)
			}
		}
	}
	return boundCompletion(res), true
}

func emptyCompletion() *mcp.CompleteResult {
	return &mcp.CompleteResult{Completion: mcp.CompletionResultDetails{Values: []string{}}}
}

// boundCompletion keeps at most maxCompletionValues values and never sends
// "values": null.
func boundCompletion(res *mcp.CompleteResult) *mcp.CompleteResult {
	if res == nil {
		return emptyCompletion()
	}
	c := &res.Completion
	if c.Values == nil {
		c.Values = []string{}
	}
	if len(c.Values) > maxCompletionValues {
		if c.Total < len(c.Values) {
			c.Total = len(c.Values)
		}
		c.Values = slices.Clone(c.Values[:maxCompletionValues])
		c.HasMore = true
	}
	return res
}
