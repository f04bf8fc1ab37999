package codemode

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/isogate/isogate/internal/pipeline"
)

// testLibrary: outer_prog calls double_sum (TypeScript, its last
// expression its value); peek shows the programs it sees; blocked is
// denied to the caller; stale_image's plan (as saved) calls
// everything.tiny-image.
func testLibrary(roots ...string) *Library {
	return &Library{Roots: roots, Programs: map[string]*LibraryProgram{
		"double_sum": {Name: "double_sum", Ref: "double_sum@2",
			Code:   "const s: number = (await everything.add({a: args.a, b: args.b})).sum;\ns * 2",
			Params: []byte(`{"type":"object","properties":{"a":{"type":"number"},"b":{"type":"number"}},"required":["a","b"]}`),
			Plan:   &pipeline.Plan{Tools: []pipeline.PlanTool{{Backend: "everything", Tool: "add", Loop: "no", Lines: []int{1}, Calls: 1}}}},
		"outer_prog": {Name: "outer_prog", Ref: "outer_prog@1", Calls: []string{"double_sum"},
			Code: "const x = await programs.double_sum({a: args.n, b: 1});\nreturn {x, sees: Object.keys(programs)}",
			Plan: &pipeline.Plan{Tools: []pipeline.PlanTool{}}},
		"peek":    {Name: "peek", Ref: "peek@1", Code: "return [...Object.keys(programs), typeof globalThis.programs]", Plan: &pipeline.Plan{Tools: []pipeline.PlanTool{}}},
		"blocked": {Name: "blocked", Ref: "blocked@1", Code: "return 1", DeniedBy: "server.auth.rules.no-blocked"},
		"stale_image": {Name: "stale_image", Ref: "stale_image@1", Code: "return await everything.tiny_image({})",
			Plan: &pipeline.Plan{Tools: []pipeline.PlanTool{{Backend: "everything", Tool: "tiny-image", Loop: "no", Lines: []int{1}, Calls: 1}}}},
	}}
}

// TestProgramsInsidePrograms: a run calls saved programs as async
// functions, inlined over the same bridge: outer_prog calls double_sum
// (TypeScript; its last expression its value) and the run's one backend
// call is theirs; each program sees as programs only those its own code
// names (outer_prog: double_sum; peek: none, and not the run's through
// globalThis; the run: its roots), so no program reaches one it does not
// name; a denied program's call fails
// with TOOL_DENIED and runs nothing. Red with the run's table for every
// program ("programs.double_sum is not a function" in outer_prog).
func TestProgramsInsidePrograms(t *testing.T) {
	f := newFixture(t, Options{})
	ctx := context.Background()
	r := f.engine.Execute(ctx, Request{Code: "const r = await programs.outer_prog({n: 2});\nconst p = await programs.peek();\nreturn {r, p, mine: Object.keys(programs)}",
		Programs: testLibrary("outer_prog", "peek")})
	if r.IsError {
		t.Fatalf("run: %s", r.Text)
	}
	var got struct {
		R struct {
			X    float64  `json:"x"`
			Sees []string `json:"sees"`
		} `json:"r"`
		P    []string `json:"p"`
		Mine []string `json:"mine"`
	}
	if err := json.Unmarshal(r.Value, &got); err != nil {
		t.Fatal(err)
	}
	if got.R.X != 6 || strings.Join(got.R.Sees, ",") != "double_sum" || strings.Join(got.P, ",") != "undefined" || strings.Join(got.Mine, ",") != "outer_prog,peek" {
		t.Fatalf("value %s", r.Value)
	}
	if n := f.backendCalls.Load(); n != 1 || len(r.Record.Calls) != 1 || r.Record.Calls[0].Tool != "add" {
		t.Fatalf("%d backend calls, record %+v", n, r.Record.Calls)
	}

	r = f.engine.Execute(ctx, Request{Code: "return await programs.blocked()", Programs: testLibrary("blocked")})
	if !r.IsError || !strings.Contains(r.Text, "TOOL_DENIED: programs.blocked is denied by server.auth.rules.no-blocked") {
		t.Fatalf("a denied program: %s", r.Text)
	}
}

// TestProgramsInsideProgramsChecked: in strict mode the checker types
// programs from the parameters (a literal of the wrong type is a certain
// mistake: TYPECHECK_FAILED, nothing ran), and the plan holds at a
// program's call the tools that program may call, so that policy refuses
// a run whose program may call a denied tool (PLAN_DENIED naming the
// run's line) before any call. Red without the declarations (the run went
// on to call everything.add) and without the plan's programs (the denied
// tool ran).
func TestProgramsInsideProgramsChecked(t *testing.T) {
	f := deniedFixtureOf(t, TypecheckStrict, false)
	ctx := context.Background()
	r := f.engine.Execute(ctx, Request{Code: "return await programs.double_sum({a: 'one', b: 1})", Programs: testLibrary("double_sum")})
	if !r.IsError || r.Code != CodeTypecheckFailed || !strings.Contains(r.Text, "line 1") {
		t.Fatalf("a wrong argument: %s %s", r.Code, r.Text)
	}
	r = f.engine.Execute(ctx, Request{Code: "const s = await programs.double_sum({a: 1, b: 2});\nconst i = await programs.stale_image();\nreturn [s, i]",
		Programs: testLibrary("double_sum", "stale_image")})
	if !r.IsError || r.Code != "PLAN_DENIED" || !strings.Contains(r.Text, "line 2 calls everything.tiny-image") {
		t.Fatalf("a program that may call a denied tool: %s %s", r.Code, r.Text)
	}
	if n := f.backendCalls.Load(); n != 0 {
		t.Fatalf("%d backend calls before the refusals", n)
	}
	r = f.engine.Execute(ctx, Request{Code: "for (const n of [1, 2]) await programs.double_sum({a: n, b: 2});\nreturn 'ok'", Programs: testLibrary("double_sum")})
	if r.IsError || r.Plan == nil || len(r.Plan.Tools) != 1 || r.Plan.Tools[0].Name() != "everything.add" || r.Plan.Tools[0].Loop != "yes" {
		t.Fatalf("a program called in a loop: %s, plan %+v", r.Text, r.Plan)
	}
}
