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
}
