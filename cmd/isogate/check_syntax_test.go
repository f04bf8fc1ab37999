package main

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestCheckSyntaxErrorExits1: `isogate check` (the real binary, as CI
// runs it) exits 1 for code that does not parse, which every run would
// refuse, with the syntax error at the code's line and column (as text,
// and in --json as syntax_error); before, the checker's TS1xxx hints were
// printed and it exited 0, "clean".
func TestCheckSyntaxErrorExits1(t *testing.T) {
	cfg := writeConfig(t, "")
	check := func(args ...string) (string, string, int) {
		t.Helper()
		return runBinary(t, "", append([]string{"check", "--config", cfg, "--log-level", "error", "--wait", "20s"}, args...)...)
	}
	out, errOut, code := check("-e", "return 1;\n}}}")
	if code != 1 || !strings.Contains(out, "error: SyntaxError: Unexpected \"}\" (line 2, column 2)") {
		t.Fatalf("stray brace: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	out, errOut, code = check("--json", "-e", "const = ;")
	var rep checkReport
	if code != 1 || json.Unmarshal([]byte(out), &rep) != nil || !strings.Contains(rep.Syntax, "(line 1, column 7)") {
		t.Fatalf("--json: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
}
