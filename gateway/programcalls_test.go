package gateway

import (
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestSavedProgramsCallSavedPrograms (issue 45): inside call_tool_chain a
// saved program is an async function, programs.<name>(args): alice's
// wrapper calls her echo_twice, from a run and when wrapper is itself
// called as a tool, its backend calls the run's own (one run record);
// bob, to whom echo_twice is not published, has no programs.echo_twice;
// carol's rules deny programs.report_*, so her own report_x fails with
// TOOL_DENIED inside a run and runs nothing; programs that call each
// other in a cycle, or a chain deeper than 4, are refused with
// PROGRAM_DEPTH before anything runs (a chain of 4 runs); a save that
// would close a cycle (a program calling itself, or one that calls it) or
// make a chain of 5 is refused with PROGRAM_DEPTH. Red without the
// library passed to the engine (programs is not defined), without the
// depth check (the cycle ran until the run's end), and with the saved
// program's own name left out of the save's check (all three saved).
func TestSavedProgramsCallSavedPrograms(t *testing.T) {
	h := programsGateway(t, t.TempDir(), "")
	alice := h.connectProgram(t, "alice", nil)
	save := func(who string, args map[string]any) {
		t.Helper()
		cs := alice
		if who != "alice" {
			cs = h.connectProgram(t, who, nil)
		}
		if text, isErr, code := callProgramTool(t, cs, "save_program", args); isErr {
			t.Fatalf("%s saves %s: %s (%s)", who, args["name"], text, code)
		}
	}
	save("alice", map[string]any{"name": "echo_twice", "description": "Echoes x twice.", "code": echoTwice, "parameters": "{ x: string }"})
	save("alice", map[string]any{"name": "wrapper", "description": "Wraps echo_twice.", "parameters": "{ x: string }",
		"code": `const inner = await programs.echo_twice({ x: args.x + "?" }); return { inner, seen: Object.keys(programs) };`})
	text, isErr, code := callProgramTool(t, alice, "call_tool_chain", map[string]any{"code": `return await programs.wrapper({ x: "in" })`})
	if isErr || !strings.Contains(text, `in?!`) || !strings.Contains(text, `"echo_twice"`) {
		t.Fatalf("a run calls wrapper, which calls echo_twice: %s (%s)", text, code)
	}
	if text, isErr, code = callProgramTool(t, alice, "program_wrapper", map[string]any{"x": "direct"}); isErr || !strings.Contains(text, `direct?!`) {
		t.Fatalf("program_wrapper called as a tool: %s (%s)", text, code)
	}

	bob := h.connectProgram(t, "bob", nil)
	if text, isErr, _ = callProgramTool(t, bob, "call_tool_chain", map[string]any{"code": `return await programs.echo_twice({ x: "b" })`}); !isErr || strings.Contains(text, "b!") {
		t.Fatalf("bob calls alice's private program from a run: %s", text)
	}
	save("carol", map[string]any{"name": "report_x", "description": "d", "code": `return await local.echo({ x: "report" })`})
	carol := h.connectProgram(t, "carol", nil)
	if text, isErr, _ = callProgramTool(t, carol, "call_tool_chain", map[string]any{"code": `return await programs.report_x()`}); !isErr ||
		!strings.Contains(text, "TOOL_DENIED: programs.report_x is denied by server.auth.rules.carol-no-reports") {
		t.Fatalf("carol calls a program her rules deny: %s", text)
	}

	// A save that would close a cycle is refused: the program calling
	// itself, or a program that calls it.
	refused := func(name, code, want string) {
		t.Helper()
		if text, isErr, got := callProgramTool(t, alice, "save_program", map[string]any{"name": name, "description": "d", "code": code}); !isErr || got != "PROGRAM_DEPTH" || !strings.Contains(text, want) {
			t.Fatalf("saving %s: %s (%s), want PROGRAM_DEPTH naming %s", name, text, got, want)
		}
	}
	refused("selfie", `return await programs.selfie()`, "selfie → selfie")
	save("alice", map[string]any{"name": "ping", "description": "d", "code": `return await programs.pong()`})
	refused("pong", `await local.echo({ x: "pong" }); return await programs.ping()`, "pong → ping → pong")
	// A run can still meet one (an older version made current again), and
	// is refused before anything runs.
	save("alice", map[string]any{"name": "ping", "description": "d", "code": `return 1`})
	save("alice", map[string]any{"name": "pong", "description": "d", "code": `await local.echo({ x: "pong" }); return await programs.ping()`})
	if text, isErr, code = callProgramTool(t, alice, "programs", map[string]any{"action": "set_current", "name": "ping", "version": 1}); isErr {
		t.Fatalf("set_current ping@1: %s (%s)", text, code)
	}
	if text, isErr, code = callProgramTool(t, alice, "call_tool_chain", map[string]any{"code": `return await programs.ping()`}); !isErr || code != "PROGRAM_DEPTH" ||
		!strings.Contains(text, "ping → pong → ping") {
		t.Fatalf("a cycle: %s (%s)", text, code)
	}
	for i, next := range []string{"d2", "d3", "d4", "d5"} {
		save("alice", map[string]any{"name": "d" + string(rune('1'+i)), "description": "d", "code": "return 1 + await programs." + next + "()"})
	}
	save("alice", map[string]any{"name": "d5", "description": "d", "code": `return 1`})
	if text, isErr, code = callProgramTool(t, alice, "call_tool_chain", map[string]any{"code": `return await programs.d1()`}); !isErr || code != "PROGRAM_DEPTH" {
		t.Fatalf("a chain of 5: %s (%s)", text, code)
	}
	refused("d1", "return 1 + await programs.d2()", "5 deep (d1 → d2 → d3 → d4 → d5)")
	if text, isErr, code = callProgramTool(t, alice, "call_tool_chain", map[string]any{"code": `return await programs.d2()`}); isErr || text != "4" {
		t.Fatalf("a chain of 4: %s (%s)", text, code)
	}
}

// TestSavedProgramCheckedWithItsPrograms (issue 45): a program that calls
// saved programs is checked at save with them, as its runs are: a literal
// of the wrong type for echo_twice's parameters refuses it
// (TYPECHECK_FAILED); a right one saves it, and what it calls through
// echo_twice (local.echo) is in its plan and its description; carol's
// program calling her report_x, which her rules deny, is refused
// (PLAN_DENIED) and not saved. Red with the vetter checking the code
// alone: all three saved, and nothing said of local.echo.
func TestSavedProgramCheckedWithItsPrograms(t *testing.T) {
	h := programsGateway(t, t.TempDir(), "")
	alice, carol := h.connectProgram(t, "alice", nil), h.connectProgram(t, "carol", nil)
	save := func(cs *mcp.ClientSession, args map[string]any) (string, bool, string) {
		t.Helper()
		return callProgramTool(t, cs, "save_program", args)
	}
	if text, isErr, code := save(alice, map[string]any{"name": "echo_twice", "description": "Echoes x twice.", "code": echoTwice, "parameters": "{ x: string }"}); isErr {
		t.Fatalf("save echo_twice: %s (%s)", text, code)
	}
	if text, isErr, code := save(alice, map[string]any{"name": "wrong_arg", "description": "d", "code": `return await programs.echo_twice({ x: 1 })`}); !isErr || code != "TYPECHECK_FAILED" {
		t.Fatalf("a wrong argument saved: %s (%s)", text, code)
	}
	text, isErr, code := save(alice, map[string]any{"name": "right_arg", "description": "d", "code": `return await programs.echo_twice({ x: "a" })`})
	if isErr || !strings.Contains(text, "it calls local.echo") {
		t.Fatalf("right_arg: %s (%s)", text, code)
	}
	if text, isErr, code := save(carol, map[string]any{"name": "report_x", "description": "d", "code": `return 1`}); isErr {
		t.Fatalf("carol saves report_x: %s (%s)", text, code)
	}
	if text, isErr, code := save(carol, map[string]any{"name": "meta", "description": "d", "code": `return await programs.report_x()`}); !isErr || code != "PLAN_DENIED" {
		t.Fatalf("carol's program calling a program her rules deny: %s (%s)", text, code)
	}
}
