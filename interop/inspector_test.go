package interop

import (
	"fmt"
	"strings"
	"testing"
)

// TestInspectorCLI drives the MCP Inspector CLI (which lists tools before it
// calls one) over streamable HTTP and stdio.
func TestInspectorCLI(t *testing.T) {
	t.Parallel()
	concurrently(t, map[string]func(t *testing.T){
		"http tools/list": func(t *testing.T) {
			out, _ := inspector(t, gateways.http(t, "").url, "--transport", "http", "--method", "tools/list")
			checkToolNames(t, out)
		},
		"http tools/call": func(t *testing.T) {
			out, _ := inspector(t, gateways.http(t, "").url, "--transport", "http",
				"--method", "tools/call", "--tool-name", "search_tools", "--tool-arg", "query=echo message")
			if text := fmt.Sprint(out["content"]); !strings.Contains(text, "everything.echo") || out["isError"] == true {
				t.Errorf("search_tools through the Inspector: %v", out)
			}
		},
		"stdio tools/list": func(t *testing.T) {
			out, _ := inspector(t, append(append([]string{"--"}, stdioArgs()[1:]...), "--method", "tools/list")...)
			checkToolNames(t, out)
		},
		"stdio tools/call run_code": func(t *testing.T) {
			out, _ := inspector(t, append(append([]string{"--"}, stdioArgs()[1:]...),
				"--method", "tools/call", "--tool-name", "run_code", "--tool-arg", "code=return 6 * 7")...)
			if sc, _ := out["structuredContent"].(map[string]any); sc["result"] != float64(42) {
				t.Errorf("run_code through the Inspector: %v", out)
			}
		},
	})
}

func checkToolNames(t *testing.T, out map[string]any) {
	t.Helper()
	tools, _ := out["tools"].([]any)
	var names []string
	for _, tool := range tools {
		if m, ok := tool.(map[string]any); ok {
			names = append(names, fmt.Sprint(m["name"]))
		}
	}
	for _, want := range []string{"search_tools", "tool_info", "list_tools_meta", "read_result", "call_tool_chain", "run_code"} {
		if !strings.Contains(" "+strings.Join(names, " ")+" ", " "+want+" ") {
			t.Errorf("the Inspector listed %v, missing %s", names, want)
		}
	}
}
