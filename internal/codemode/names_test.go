package codemode

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/isogate/isogate/config"
	"github.com/isogate/isogate/internal/catalog"
	"github.com/isogate/isogate/internal/pipeline"
	"github.com/isogate/isogate/internal/typecheck"
)

// deniedFixture is newFixture with backends.everything.tools.deny:
// [tiny-image], put in the catalogue as the gateway puts it (the tool
// offered no more, named as denied), and the policy's plan admission;
// mode is sandbox.typecheck.
func deniedFixture(t *testing.T, mode string) *fixture {
	return deniedFixtureOf(t, mode, false)
}

// deniedFixtureOf is deniedFixture; with large, the catalogue has a
// backend of more tools than the prelude carries (maxPreludeTools), so the
// bridge asks the host what each name is (lookupHandler).
func deniedFixtureOf(t *testing.T, mode string, large bool) *fixture {
	t.Helper()
	policy := pipeline.NewPolicy(map[string]config.Backend{"everything": {Tools: config.ToolPolicy{Deny: []string{"tiny-image"}}}})
	opts := Options{AdmitPlan: func(ctx context.Context, plan *pipeline.Plan, ask bool) error {
		return pipeline.AdmitPlan(ctx, policy, plan, ask)
	}}
	if mode != TypecheckOff {
		if err := typecheck.Shared().Warm(t.Context()); err != nil {
			t.Fatal(err)
		}
		opts.Typecheck, opts.TypecheckMode, opts.TypecheckTimeout = typecheck.Shared(), mode, time.Minute
	}
	f := newFixture(t, opts)
	var offered []*mcp.Tool
	var denied []catalog.DeniedTool
	for _, e := range f.catalog.Entries() {
		if e.Backend != "everything" {
			continue
		}
		if rule, _ := policy.DeniedBy(e.Backend, e.Tool); rule != "" {
			denied = append(denied, catalog.DeniedTool{Tool: e.Tool, Rule: rule})
		} else {
			offered = append(offered, e.Def)
		}
	}
	if len(denied) != 1 {
		t.Fatalf("denied %v", denied)
	}
	f.catalog.SetBackendPolicy("everything", nil, offered, denied)
	if large {
		bulk := make([]*mcp.Tool, maxPreludeTools+1)
		for i := range bulk {
			bulk[i] = &mcp.Tool{Name: fmt.Sprintf("tool-%d", i), InputSchema: map[string]any{"type": "object"}}
		}
		f.catalog.SetBackend("bulk", nil, bulk)
	}
	return f
}

// TestDeniedToolEveryAccessForm: a program that reaches a denied tool by
// any spelling and any access form (dot with underscores, bracket with the
// original hyphens, a computed name) is refused naming the rule: TOOL_DENIED
// when it runs unchecked or the name is computed, PLAN_DENIED before any
// call when the checker sees the name; never "not a function", "has no
// tool", "not a tool of" or a did-you-mean. The program can catch the
// refusal and read its code.
func TestDeniedToolEveryAccessForm(t *testing.T) {
	const rule = "everything.tiny-image is denied by backends.everything.tools.deny"
	forms := map[string]string{
		"dot":      "everything.tiny_image",
		"bracket":  `everything["tiny-image"]`,
		"computed": `everything[["tiny", "image"].join("-")]`,
		"swapped":  `everything["tiny_image"]`,
	}
	for _, mode := range []string{TypecheckOff, TypecheckStrict, "off-host-lookup"} {
		t.Run(mode, func(t *testing.T) {
			large := mode == "off-host-lookup"
			if large {
				mode = TypecheckOff
			}
			f := deniedFixtureOf(t, mode, large)
			if large && f.engine.view().backend("everything").Tools != nil {
				t.Fatal("the prelude carries the name table: the host is not asked")
			}
			for form, ref := range forms {
				t.Run(form, func(t *testing.T) {
					program := "const s = await everything.get_sum({a: 1, b: 2});\nconst r = await " + ref + "({});\nreturn [s, r]"
					r := f.exec(t, program)
					code, want := "TOOL_DENIED", "TOOL_DENIED"
					if mode == TypecheckStrict && form != "computed" {
						code = "PLAN_DENIED"
						want = "PLAN_DENIED: the program was not run (no tool was called): line 2 calls everything.tiny-image, which the configuration denies (backends.everything.tools.deny)"
					} else {
						want = rule
					}
					if !r.IsError || string(r.Code) != code || !strings.Contains(r.Text, want) {
						t.Fatalf("%s: code %s, want %s naming the rule:\n%s", ref, r.Code, code, r.Text)
					}
					for _, bad := range []string{"not a function", "has no tool", "not a tool of", "did you mean", "not in the catalogue"} {
						if strings.Contains(r.Text, bad) {
							t.Fatalf("%s: %q in\n%s", ref, bad, r.Text)
						}
					}
				})
			}
			if mode == TypecheckOff {
				r := f.ok(t, "try {\n  await everything.tiny_image({});\n  return 'called';\n} catch (e) {\n  return [e.code, e.message];\n}")
				if got := string(r.Value); got != `["TOOL_DENIED","TOOL_DENIED: `+rule+`"]` {
					t.Fatalf("caught: %s", got)
				}
			}
		})
	}
}

// TestDeniedToolFastTiers: the direct tier and __getToolInterface name a
// denied tool as denied (TOOL_DENIED), as tier 3 does; a one-call program
// falls through to tier 3 and gets the same.
func TestDeniedToolFastTiers(t *testing.T) {
	f := deniedFixture(t, TypecheckOff)
	for _, program := range []string{
		`{"tool": "everything.tiny_image", "arguments": {}}`,
		`return __getToolInterface("everything.tiny-image")`,
		`return await everything.tiny_image({})`,
	} {
		r := f.exec(t, program)
		// The message starts with its code in every tier (it lacked it in
		// the direct tier and __getToolInterface: found in a tryout).
		if !r.IsError || r.Code != pipeline.CodeToolDenied || !strings.HasPrefix(r.Text, "Error: TOOL_DENIED: everything.tiny-image is denied by backends.everything.tools.deny") {
			t.Errorf("%s: code %s:\n%s", program, r.Code, r.Text)
		}
	}
	// An unknown name still gets did-you-mean, over the tools offered only.
	r := f.exec(t, `{"tool": "everything.tiny-imag", "arguments": {}}`)
	if !r.IsError || strings.Contains(r.Text, "tiny-image") {
		t.Errorf("unknown name: %s", r.Text)
	}
}
