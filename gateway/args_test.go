package gateway

import (
	"strings"
	"testing"

	"github.com/isogate/isogate/config"
	"github.com/isogate/isogate/internal/app"
	"github.com/isogate/isogate/internal/backend"
)

// TestStrictCoversOneCallPrograms: with sandbox.typecheck strict, a
// program of one call with a wrong parameter is refused before any call
// with TYPECHECK_FAILED, as the same mistake in a longer program is by the
// checker, whatever tier serves it (issue 43, 4: the "simple" tier ran it
// unchecked and the backend refused it). The fast tiers need no compiler:
// the call's arguments are checked against the tool's input schema.
func TestStrictCoversOneCallPrograms(t *testing.T) {
	cs, rec := typecheckGateway(t, "strict")
	for _, tc := range []struct{ name, code, want string }{
		{"tier 2", "const s = await counter.bump({ident: 'x'}); return s",
			"line 1, column 25: `ident` (did you mean `id`?) is not a parameter of counter.bump; the required parameter `id` is missing; it takes { by?: number; id: string } (INVALID_ARGUMENTS: the tool's input schema)"},
		{"tier 1", `{"tool": "counter.bump", "arguments": {"id": 7}}`, "counter.bump: `id` must be string, not integer"},
		{"tier 3", "const n = 0;\nconst s = await counter.bump({ident: 'x'}); return s",
			"line 2, column 31: `ident` is not a parameter of counter.bump; did you mean `id`?"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			text, isErr, res := callText(t, cs, "call_tool_chain", map[string]any{"code": tc.code})
			if !isErr || !strings.HasPrefix(text, "TYPECHECK_FAILED: the program was not run (no tool was called)") ||
				!strings.Contains(text, tc.want) || res.Meta["isogate/code"] != "TYPECHECK_FAILED" {
				t.Errorf("got (error %v, meta %v):\n%s\nwant TYPECHECK_FAILED with %q", isErr, res.Meta, text, tc.want)
			}
		})
	}
	if calls := rec.got(); len(calls) != 0 {
		t.Fatalf("the backend received %v; want no call", calls)
	}
	if text := chainOK(t, cs, "const s = await counter.bump({id: 'ok'}); return s"); !strings.Contains(text, "ok") {
		t.Fatalf("a valid one-call program: %s", text)
	}
}

// TestPassthroughChecksArguments: a passthrough call whose arguments the
// input schema refuses is refused with INVALID_ARGUMENTS in
// _meta["isogate/code"], naming the wrong parameter and what the tool
// takes; the backend is not called.
func TestPassthroughChecksArguments(t *testing.T) {
	cfg := config.Default()
	cfg.Server.CacheDir = t.TempDir()
	cfg.Sandbox.Isolation = config.IsolationThread
	cfg.Server.Expose = config.ExposeBoth
	rec := &recorder{}
	g := startHealthy(t, cfg, app.Options{Runner: testPool(), ExtraSpecs: []backend.Spec{rec.spec()}})
	cs := connect(t, g, nil)
	name := ""
	list, err := cs.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range list.Tools {
		if strings.Contains(tool.Name, "bump") {
			name = tool.Name
		}
	}
	text, isErr, res := callText(t, cs, name, map[string]any{"ident": "x"})
	if !isErr || res.Meta["isogate/code"] != "INVALID_ARGUMENTS" ||
		!strings.Contains(text, "`ident` (did you mean `id`?) is not a parameter of counter.bump; the required parameter `id` is missing; it takes { by?: number; id: string }") {
		t.Fatalf("got (error %v, meta %v): %s", isErr, res.Meta, text)
	}
	if calls := rec.got(); len(calls) != 0 {
		t.Fatalf("the backend received %v; want no call", calls)
	}
	if text, isErr, _ := callText(t, cs, name, map[string]any{"id": "ok"}); isErr {
		t.Fatalf("a valid call: %s", text)
	}
}
