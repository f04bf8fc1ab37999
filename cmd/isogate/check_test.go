package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCheckExitCodes runs `isogate check` as CI would, against the real
// server-everything with echo denied: a clean program exits 0 and prints
// its plan; a certain mistake exits 1 with the fix; a program that may
// call a denied tool exits 1 naming it; usage errors exit 2. A program
// whose only call has a computed name says the plan names no tool.
func TestCheckExitCodes(t *testing.T) {
	cfg := writeConfig(t, "")
	data, _ := os.ReadFile(cfg)
	data = []byte(strings.Replace(string(data), "    tags: [demo]\n", "    tags: [demo]\n    tools:\n      deny: [echo, get-env]\n", 1))
	if err := os.WriteFile(cfg, data, 0o600); err != nil {
		t.Fatal(err)
	}
	check := func(args ...string) (string, string, int) {
		t.Helper()
		return runBinary(t, "", append([]string{"check", "--config", cfg, "--log-level", "error", "--wait", "20s"}, args...)...)
	}
	prog := filepath.Join(t.TempDir(), "sum.ts")
	if err := os.WriteFile(prog, []byte("let s = 0;\nfor (const b of [1, 2]) {\n  s += (await everything.get_sum({a: s, b})).content.length;\n}\nreturn s"), 0o600); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := check(prog)
	if code != 0 || !strings.Contains(out, "plan: the program may call\n- everything.get-sum (line 3; in a loop: yes)") {
		t.Fatalf("clean: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}

	// Only a computed tool name: the plan has no tool to list before the
	// calls it cannot name, and says so rather than a heading over nothing.
	out, errOut, code = check("-e", `const n = "get_sum"; return await everything[n]({a: 1, b: 2})`)
	if code != 0 || !strings.HasPrefix(out, "plan: the program names no tool the checker knows\n"+
		"The program may also call tools by names known only when it runs") {
		t.Fatalf("computed name: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}

	out, errOut, code = check("--json", "-e", "await everything.get_sum({a: 1, bb: 2})")
	var rep checkReport
	if code != 1 || json.Unmarshal([]byte(out), &rep) != nil || rep.Certain != 1 ||
		!strings.Contains(rep.Diagnostics[0].Hint(), "`bb` is not a parameter of everything.get_sum; did you mean `b`?") {
		t.Fatalf("mistake: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}

	out, errOut, code = check("-e", "await everything.get_sum({a: 1, b: 2});\nawait everything.echo({message: 'x'})")
	if code != 1 || !strings.Contains(out, "error: PLAN_DENIED: the program was not run (no tool was called): line 2 calls everything.echo, which the configuration denies") {
		t.Fatalf("denied: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}

	// A denied tool in the other spelling (get_env for get-env) is the
	// denied tool, named with its rule: no "not a tool", no did-you-mean
	// (issue 43).
	out, errOut, code = check("-e", "await everything.get_sum({a: 1, b: 2});\nawait everything.get_env({})")
	if code != 1 || !strings.HasPrefix(out, "error: PLAN_DENIED: the program was not run (no tool was called): line 2 calls everything.get-env, "+
		"which the configuration denies (backends.everything.tools.deny)\n") ||
		!strings.Contains(out, "- everything.get-env (line 2; in a loop: no; at most 1 call; denied by backends.everything.tools.deny)") ||
		strings.Contains(out, "did you mean") || strings.Contains(out, "not a tool") {
		t.Fatalf("denied, other spelling: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}

	for _, args := range [][]string{{}, {filepath.Join(t.TempDir(), "missing.ts")}} {
		if _, errOut, code := check(args...); code != 2 {
			t.Fatalf("usage %v: exit %d, stderr %s", args, code, errOut)
		}
	}
}
