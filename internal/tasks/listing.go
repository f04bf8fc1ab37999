package tasks

import (
	"context"
	"encoding/json"
	"maps"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// What clients are told about gateway-owned tasks (tasks.go): the `tasks`
// capability in the initialize result, and `execution.taskSupport` on the
// tools that may run as tasks. The go-sdk's types have neither field, so
// a receiving middleware marshals them in.
//
// Every such tool is listed "optional", to every client: call_tool_chain,
// and backend tools whose backend lists them "required" or "optional".
// Through isogate a "required" backend tool is optional indeed: a plain
// call is driven as a task by the gateway (internal/backend/tasks.go), so
// a client that declares no tasks (and would refuse to call a tool listed
// "required" plainly) still uses it, and one that does may run it as a
// task (Host.TaskSupport says which). A task-augmented call of any other
// tool is accepted too.

// tasksCapability is the server's `capabilities.tasks` (2025-11-25).
var tasksCapability = map[string]any{
	"list":     map[string]any{},
	"cancel":   map[string]any{},
	"requests": map[string]any{"tools": map[string]any{"call": map[string]any{}}},
}

// Listing is a receiving middleware that adds the tasks capability to
// the initialize result, the tasks extension to server/discover's, and
// execution.taskSupport to tools/list.
func (g *Tasks) Listing(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		res, err := next(ctx, method, req)
		if err != nil {
			return res, err
		}
		switch r := res.(type) {
		case *mcp.InitializeResult:
			if r != nil {
				return initializeWithTasks{r}, nil
			}
		case *mcp.DiscoverResult:
			if r != nil && r.Capabilities != nil {
				return discoverWithTasks(r), nil
			}
		case *mcp.ListToolsResult:
			if r != nil {
				return toolsWithExecution{r, g.host.TaskSupport}, nil
			}
		}
		return res, nil
	}
}

// discoverWithTasks is a server/discover result (2026-07-28) that
// advertises the tasks extension under capabilities.extensions (taskext.go).
func discoverWithTasks(r *mcp.DiscoverResult) *mcp.DiscoverResult {
	out := *r
	caps := *r.Capabilities
	caps.Extensions = maps.Clone(caps.Extensions)
	caps.AddExtension(Extension, nil)
	out.Capabilities = &caps
	return &out
}

// initializeWithTasks marshals an InitializeResult with capabilities.tasks.
type initializeWithTasks struct{ *mcp.InitializeResult }

// MarshalJSON implements json.Marshaler.
func (r initializeWithTasks) MarshalJSON() ([]byte, error) {
	raw, err := json.Marshal(r.InitializeResult)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, err
	}
	caps, _ := m["capabilities"].(map[string]any)
	if caps == nil {
		caps = map[string]any{}
	}
	caps["tasks"] = tasksCapability
	m["capabilities"] = caps
	return json.Marshal(m)
}

// toolsWithExecution marshals a ListToolsResult with execution.taskSupport
// on the tools that have one.
type toolsWithExecution struct {
	*mcp.ListToolsResult
	support func(name string) string
}

// MarshalJSON implements json.Marshaler.
func (r toolsWithExecution) MarshalJSON() ([]byte, error) {
	raw, err := json.Marshal(r.ListToolsResult)
	if err != nil {
		return nil, err
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, err
	}
	var tools []map[string]json.RawMessage
	if err := json.Unmarshal(m["tools"], &tools); err != nil {
		return raw, nil
	}
	changed := false
	for _, t := range tools {
		var name string
		_ = json.Unmarshal(t["name"], &name)
		if s := r.support(name); s != "" {
			t["execution"], _ = json.Marshal(map[string]string{"taskSupport": s})
			changed = true
		}
	}
	if !changed {
		return raw, nil
	}
	if m["tools"], err = json.Marshal(tools); err != nil {
		return nil, err
	}
	return json.Marshal(m)
}
