package gateway

import (
	"context"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/isogate/isogate/config"
)

// TestDeniedToolNamedEverywhere: with backends.everything.tools.deny:
// [get-env] over the real server-everything, every place a client names a
// tool answers "what is this name?" the same way. tool_info names the rule
// (in either spelling), not "unknown tool ... did you mean"; search and
// lists hide the denied tool; a passthrough call of its prefixed name or
// of a bare name that is listed prefixed is answered by what the name is:
// TOOL_DENIED naming the rule, or the name it is listed as.
func TestDeniedToolNamedEverywhere(t *testing.T) {
	g, _ := surfaceGateway(t, config.ExposeBoth, nil)
	cs := connect(t, g, nil)
	const rule = "everything.get-env is denied by backends.everything.tools.deny"
	for _, name := range []string{"everything.get-env", "everything.get_env", "get_env"} {
		text, isErr, _ := callText(t, cs, "tool_info", map[string]any{"tool_name": name})
		if !isErr || text != rule {
			t.Errorf("tool_info %s: (error %v) %q, want %q", name, isErr, text, rule)
		}
	}
	if text, _, _ := callText(t, cs, "search_tools", map[string]any{"query": "environment variables"}); strings.Contains(text, "get-env") {
		t.Errorf("search shows the denied tool:\n%s", text)
	}
	// Asked for by name, search says what the name is.
	if text, _, _ := callText(t, cs, "search_tools", map[string]any{"query": "everything.get_env"}); !strings.HasPrefix(text, rule+"\n\n") ||
		strings.Contains(text, "everything.get-env —") {
		t.Errorf("search by the denied tool's name:\n%s", text)
	}
	if text, _, _ := callText(t, cs, "list_tools_meta", map[string]any{}); strings.Contains(text, "get-env") {
		t.Errorf("list_tools_meta shows the denied tool:\n%s", text)
	}

	ctx := context.Background()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "everything__get-env", Arguments: map[string]any{}})
	if err != nil || !res.IsError || res.Meta["isogate/code"] != "TOOL_DENIED" || res.Content[0].(*mcp.TextContent).Text != "TOOL_DENIED: "+rule {
		t.Errorf("passthrough call of the denied tool: %v %+v", err, res)
	}
	// A bare name is listed prefixed (server.tool_names: prefixed).
	_, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "get-sum", Arguments: map[string]any{"a": 1, "b": 2}})
	if err == nil || !strings.Contains(err.Error(), `unknown tool "get-sum": it is listed as "everything__get-sum"`) {
		t.Errorf("bare name: %v", err)
	}
	_, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "everything__get-summ", Arguments: map[string]any{}})
	if err == nil || !strings.Contains(err.Error(), `unknown tool "everything__get-summ": did you mean "everything__get-sum"`) {
		t.Errorf("near name: %v", err)
	}
}
