package gateway

import (
	"strings"
	"testing"
)

// TestProgramsTryoutFindings: the tryout's findings on saved programs
// (issue 45) hold no more.
func TestProgramsTryoutFindings(t *testing.T) {
	h := programsGateway(t, t.TempDir(), "")
	alice := h.connectProgram(t, "alice", nil)

	// programs {} lists, as its description says (action defaults to list).
	if text, isErr, code := callProgramTool(t, alice, "programs", map[string]any{}); isErr {
		t.Errorf("programs {}: %s (%s)", text, code)
	}

	// An echoed name is cut: a 3 MiB name gives a short error.
	huge := strings.Repeat("A", 3<<20)
	for _, c := range []struct {
		tool string
		args map[string]any
	}{
		{"save_program", map[string]any{"name": huge, "description": "d", "code": "return 1"}},
		{"save_program", map[string]any{"name": "a" + huge, "description": "d", "code": "return 1"}},
		{"programs", map[string]any{"action": "versions", "name": huge}},
		{"programs", map[string]any{"action": huge}},
		{"program_" + huge, map[string]any{}},
	} {
		text, isErr, code := callProgramTool(t, alice, c.tool, c.args)
		if !isErr || len(text) > 600 {
			t.Errorf("%.20s %.40v: error %v, code %s, %d bytes: %.300s", c.tool, c.args, isErr, code, len(text), text)
		}
	}

	// export default on line 1 saves and runs, as call_tool_chain runs it.
	if text, isErr, code := callProgramTool(t, alice, "save_program", map[string]any{
		"name": "mod", "description": "d", "code": "export default async function () { return \"mod:\" + args.x }"}); isErr {
		t.Fatalf("save a module: %s (%s)", text, code)
	}
	if text, isErr, _ := callProgramTool(t, alice, "program_mod", map[string]any{"x": "hi"}); isErr || !strings.Contains(text, "mod:hi") {
		t.Errorf("call a module: %s", text)
	}

	// An error's position is the saved code's.
	if text, isErr, code := callProgramTool(t, alice, "save_program", map[string]any{
		"name": "deep", "description": "d", "code": "return args.q.r.s"}); isErr {
		t.Fatalf("save deep: %s (%s)", text, code)
	}
	if text, _, _ := callProgramTool(t, alice, "program_deep", map[string]any{}); !strings.Contains(text, "(saved program deep@1, line 1, column 15)") ||
		!strings.Contains(text, "at deep@1:1:15") {
		t.Errorf("error thrown in deep@1: %s", text)
	}
	// In a module, and called from a program.
	if text, isErr, code := callProgramTool(t, alice, "save_program", map[string]any{
		"name": "deep_mod", "description": "d", "code": "export default async function () {\n  return args.q.r\n}"}); isErr {
		t.Fatalf("save deep_mod: %s (%s)", text, code)
	}
	if text, _, _ := callProgramTool(t, alice, "call_tool_chain", map[string]any{"code": "const x = 1;\nreturn await programs.deep_mod({})"}); !strings.Contains(text, "(saved program deep_mod@1, line 2, column 17)") {
		t.Errorf("error thrown in deep_mod@1: %s", text)
	}
}
