package interop

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
)

// resultURIPattern finds a stored result's URI in a tool's answer.
var resultURIPattern = regexp.MustCompile(`isogate://result/[0-9a-f]{32}`)

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
		"http with a token: the next call reads the result one call stored": func(t *testing.T) {
			// Each Inspector CLI call is a session of its own: the run
			// record and the stored result are the token's principal's.
			url, auth := gateways.http(t, testToken).url, "Authorization: Bearer "+testToken
			out, _ := inspector(t, url, "--transport", "http", "--header", auth, "--method", "tools/call",
				"--tool-name", "call_tool_chain", "--tool-arg", `code=return "inspector-secret" + "x".repeat(3000)`,
				"--tool-arg", "max_output_size=300")
			uri := resultURIPattern.FindString(fmt.Sprint(out["content"]))
			meta, _ := out["_meta"].(map[string]any)
			run, _ := meta["isogate/run"].(string)
			if uri == "" || run == "" {
				t.Fatalf("call_tool_chain through the Inspector stored no result or run: %v", out)
			}
			for _, read := range []string{uri, "isogate://runs/" + run} {
				got, _ := inspector(t, url, "--transport", "http", "--header", auth, "--method", "resources/read", "--uri", read)
				if !strings.Contains(fmt.Sprint(got["contents"]), "inspector-secret") {
					t.Errorf("reading %s in the next Inspector call: %.300v", read, got)
				}
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
