package gateway

import (
	"strings"
	"testing"
)

// TestUnknownProgramHinted: a run that calls a saved program the caller
// has none of failed with only "ReferenceError: programs is not defined"
// (found in a tryout: an agent's typo of its own program's name read as
// if saved programs did not exist). Now the hint names the program and
// the closest one the caller may call, or lists them, or says there are
// none; a program the caller's rules deny is never offered. Red without
// programHints: no hint at all.
func TestUnknownProgramHinted(t *testing.T) {
	h := programsGateway(t, t.TempDir(), "")
	alice := h.connectProgram(t, "alice", nil)
	if text, isErr, code := callProgramTool(t, alice, "save_program", map[string]any{"name": "echo_twice", "description": "Echoes x twice.", "code": echoTwice, "parameters": "{ x: string }"}); isErr {
		t.Fatalf("save: %s (%s)", text, code)
	}
	for _, c := range []struct{ code, want string }{
		// Only an unknown name: programs is not defined.
		{`return await programs.echo_twce({ x: "a" })`, "Hint: You have no saved program `echo_twce` to call; did you mean `programs.echo_twice`?"},
		// A known one beside it: programs.<unknown> is not a function.
		{`await programs.echo_twice({ x: "a" }); return await programs.echo_twcie({ x: "a" })`, "Hint: You have no saved program `echo_twcie` to call; did you mean `programs.echo_twice`?"},
		{`return await programs.zzz_unrelated({})`, "Hint: You have no saved program `zzz_unrelated` to call; yours: echo_twice"},
	} {
		text, isErr, code := callProgramTool(t, alice, "call_tool_chain", map[string]any{"code": c.code})
		if !isErr || code != "EVAL_ERROR" || !strings.Contains(text, c.want) {
			t.Errorf("%s:\n%s (%s)\nwant %q", c.code, text, code, c.want)
		}
	}

	bob := h.connectProgram(t, "bob", nil)
	text, isErr, _ := callProgramTool(t, bob, "call_tool_chain", map[string]any{"code": `return await programs.echo_twice({ x: "b" })`})
	if !isErr || !strings.Contains(text, "you may call no saved program yet") || strings.Contains(text, "b!") {
		t.Errorf("bob names alice's private program:\n%s", text)
	}

	carol := h.connectProgram(t, "carol", nil)
	if text, isErr, code := callProgramTool(t, carol, "save_program", map[string]any{"name": "report_x", "description": "d", "code": `return 1`}); isErr {
		t.Fatalf("carol saves report_x: %s (%s)", text, code)
	}
	text, isErr, _ = callProgramTool(t, carol, "call_tool_chain", map[string]any{"code": `return await programs.reprot_x()`})
	if !isErr || !strings.Contains(text, "no saved program `reprot_x`") || strings.Contains(text, "programs.report_x") {
		t.Errorf("carol's typo is hinted toward the program her rules deny:\n%s", text)
	}
}

// TestSaveTooComplexNotRetried: a program whose check exhausts the
// checker (a literal nested thousands deep) is refused at save with
// TYPECHECK_TOO_COMPLEX, whose advice is to simplify it, not "try again
// in a few seconds" (found in a tryout: the same program saved again is
// refused again; only TYPECHECK_UNAVAILABLE is retryable as is). Red with
// the vetter's one message for every code.
func TestSaveTooComplexNotRetried(t *testing.T) {
	h := programsGateway(t, t.TempDir(), "")
	alice := h.connectProgram(t, "alice", nil)
	nested := "return " + strings.Repeat("{a:[1,'x',", 4000) + strings.Repeat("]}", 4000)
	text, isErr, code := callProgramTool(t, alice, "save_program", map[string]any{"name": "deep", "description": "d", "code": nested})
	if !isErr || code != "TYPECHECK_TOO_COMPLEX" || strings.Contains(text, "try again") || !strings.Contains(text, "split the program") {
		t.Fatalf("a program too complex to check: %s (%s)", text, code)
	}
}

// TestSaveNamesMissingProgram: a program that calls a saved program the
// saver has none of is saved (it may be saved next), and the answer says
// so; found in a tryout, where such a save read as fine and every run of
// it then failed with "programs is not defined". Red without the note.
func TestSaveNamesMissingProgram(t *testing.T) {
	h := programsGateway(t, t.TempDir(), "")
	alice := h.connectProgram(t, "alice", nil)
	text, isErr, code := callProgramTool(t, alice, "save_program", map[string]any{"name": "outer", "description": "d",
		"code": `return [await programs.outer_helper({})]`})
	if isErr || !strings.Contains(text, "note: it calls programs.outer_helper, which you have no program of") {
		t.Fatalf("saving a program that calls one not saved: %s (%s)", text, code)
	}
	if text, isErr, code = callProgramTool(t, alice, "save_program", map[string]any{"name": "outer_helper", "description": "d", "code": `return 1`}); isErr || strings.Contains(text, "note:") {
		t.Fatalf("saving the helper: %s (%s)", text, code)
	}
}

// TestToolInfoOfSavedProgram: tool_info of a saved program, by the name
// tools/list shows (program_<name>) or the one programs call
// (programs.<name>), answers with its description and parameters; it
// answered "unknown tool …; use search_tools to find tools", and
// search_tools does not search programs (tryout). Another principal's
// private program stays unknown to bob.
func TestToolInfoOfSavedProgram(t *testing.T) {
	h := programsGateway(t, t.TempDir(), "")
	alice := h.connectProgram(t, "alice", nil)
	if text, isErr, code := callProgramTool(t, alice, "save_program", map[string]any{"name": "echo_twice", "description": "Echoes x twice.", "code": echoTwice, "parameters": "{ x: string }"}); isErr {
		t.Fatalf("save: %s (%s)", text, code)
	}
	for _, name := range []string{"program_echo_twice", "programs.echo_twice"} {
		text, isErr, _ := callProgramTool(t, alice, "tool_info", map[string]any{"tool_name": name})
		if isErr || !strings.Contains(text, "Echoes x twice.") || !strings.Contains(text, `"x"`) || !strings.Contains(text, "await programs.echo_twice(args)") {
			t.Errorf("tool_info %s:\n%s", name, text)
		}
	}
	bob := h.connectProgram(t, "bob", nil)
	if text, isErr, _ := callProgramTool(t, bob, "tool_info", map[string]any{"tool_name": "program_echo_twice"}); !isErr || strings.Contains(text, "Echoes") {
		t.Errorf("bob's tool_info of alice's private program:\n%s", text)
	}
}
