package main

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
)

// TestExecNoticesAndWholeOutput runs `isogate exec` as a user does, against
// the real server-everything: notices (a missing await) reach stderr with
// exit 0 and stdout keeps the value alone; a large result is printed whole
// (no chunk summary, no isogate://result URI or read_result hint, which
// would outlive the process); the intent filter's note goes to stderr and
// stdout stays JSON; a backend hint names `isogate doctor`, not a
// resource of the exited gateway.
func TestExecNoticesAndWholeOutput(t *testing.T) {
	cfg := writeConfig(t, "")
	data, _ := os.ReadFile(cfg)
	data = []byte(strings.Replace(string(data), "backends:\n", "backends:\n  dead:\n    command: /nonexistent/isogate-exec-dead\n", 1))
	if err := os.WriteFile(cfg, data, 0o600); err != nil {
		t.Fatal(err)
	}
	exec := func(args ...string) (string, string, int) {
		t.Helper()
		return runBinary(t, "", append([]string{"exec", "--config", cfg, "--log-level", "error", "--wait", "20s"}, args...)...)
	}
	noGateway := func(what, s string) {
		t.Helper()
		if strings.Contains(s, "isogate://") || strings.Contains(s, "read_result") {
			t.Fatalf("%s points at the exited gateway:\n%.3000s", what, s)
		}
	}

	// A missing await: the value is null, the notices say why, exit 0.
	out, errOut, code := exec("-e", "const r = everything.get_sum({a: 1, b: 2});\nreturn r.content")
	if code != 0 || strings.TrimSpace(out) != "null" {
		t.Fatalf("missing await: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	for _, want := range []string{"[notice] 1 call to everything.get-sum was not awaited; it completed",
		"[notice] missing await? The program read `.content` from the Promise that everything.get_sum returned"} {
		if !strings.Contains(errOut, want) {
			t.Fatalf("stderr lacks %q:\n%s", want, errOut)
		}
	}
	// Without a return: the value alone on stdout, the reminder on stderr.
	out, errOut, code = exec("-e", "await everything.get_sum({a: 1, b: 2}); 1; let x = 2")
	if code != 0 || strings.TrimSpace(out) != "null" || !strings.Contains(errOut, "[notice] The program returned nothing") {
		t.Fatalf("no return: exit %d, stdout %q, stderr %q", code, out, errOut)
	}

	// A result far over max_output_size: whole on stdout.
	out, errOut, code = exec("-e", `return Array.from({length: 3000}, (_, i) => ({id: i, owner: ["bo", "dee"][i % 2], text: "x".repeat(40)}))`)
	var items []struct {
		ID    int
		Owner string
	}
	if code != 0 || json.Unmarshal([]byte(out), &items) != nil || len(items) != 3000 || items[2999].ID != 2999 {
		t.Fatalf("large result: exit %d, %d items, stdout %.500q, stderr %q", code, len(items), out, errOut)
	}
	noGateway("a large result", out+errOut)

	// --intent: the note on stderr, the kept items (JSON) on stdout.
	out, errOut, code = exec("--intent", "owner=dee", "-e", `return Array.from({length: 3000}, (_, i) => ({id: i, owner: ["bo", "dee"][i % 2], text: "x".repeat(40)}))`)
	items = nil
	if code != 0 || json.Unmarshal([]byte(out), &items) != nil || len(items) != 1500 || items[0].Owner != "dee" ||
		!strings.Contains(errOut, `[intent filter: kept 1500 of 3000 items matching "owner=dee"]`) {
		t.Fatalf("intent: exit %d, %d items, stdout %.300q, stderr %q", code, len(items), out, errOut)
	}
	noGateway("a filtered result", out+errOut)

	// A backend failure's hint names a terminal command.
	_, errOut, code = exec("-e", "const r = await dead.anything({}); return r")
	if code != 1 || !strings.Contains(errOut, "isogate doctor") {
		t.Fatalf("dead backend: exit %d, stderr %q", code, errOut)
	}
	noGateway("a backend hint", errOut)
}

// TestExecSavedProgramHinted: `isogate exec` has no saved programs, and a
// program calling one says so instead of pointing at the programs tool
// of a gateway it is not talking to. Red with the gateway's hint.
func TestExecSavedProgramHinted(t *testing.T) {
	_, errOut, code := runBinary(t, "", "exec", "--config", writeConfig(t, ""), "--log-level", "error", "-e", `return await programs.weekly({})`)
	if code != 1 || !strings.Contains(errOut, "`isogate exec` runs a program without saved programs") || strings.Contains(errOut, "the programs tool") {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
}
