package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReplay records a run against the real server-everything (isogate exec
// with server.record_dir), then replays it with no backends: the same
// result and exit 0; a tampered record exits 1; a call the record does not
// hold is an error.
func TestReplay(t *testing.T) {
	dir := t.TempDir()
	recDir := filepath.Join(dir, "records")
	cfg := filepath.Join(dir, "isogate.yaml")
	body := fmt.Sprintf(`server:
  cache_dir: %s
  record_dir: records
backends:
  everything:
    command: node
    args: [%q, stdio]
sandbox:
  isolation: thread
  trusted_code: true
  timeout: 10s
`, filepath.Join(dir, "cache"), everythingServer(t))
	if err := os.WriteFile(cfg, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	code := `const sums = [];
for (const i of [1, 2, 3]) sums.push(await everything.get_sum({a: i, b: 10}));
const [e1, e2] = await Promise.all([everything.echo({message: "one"}), everything.echo({message: "two"})]);
console.log("summed", sums.length);
let caught = "";
try { await everything.no_such_tool({}); } catch (e) { caught = "error"; }
return {sums, e1, e2, caught};`
	stdout, stderr, exit := runBinary(t, "", "exec", "--config", cfg, "-e", code)
	if exit != 0 || !strings.Contains(stdout, "The sum of 3 and 10 is 13") {
		t.Fatalf("exec: exit %d\n%s\n%s", exit, stdout, stderr)
	}
	files, _ := filepath.Glob(filepath.Join(recDir, "*.json"))
	if len(files) != 1 {
		t.Fatalf("record_dir holds %v, want one record", files)
	}
	raw, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	var rec map[string]any
	if err := json.Unmarshal(raw, &rec); err != nil {
		t.Fatal(err)
	}
	if calls, _ := rec["calls"].([]any); len(calls) != 5 {
		t.Fatalf("record has %d calls, want 5:\n%s", len(calls), raw)
	}

	// Replay without backends (no config at all) gives the recorded result.
	out, errOut, exit := runBinary(t, "", "replay", files[0])
	if exit != 0 || !strings.Contains(out, "The sum of 3 and 10 is 13") || !strings.Contains(out, "Echo: two") || !strings.Contains(errOut, "summed 3") {
		t.Fatalf("replay: exit %d\n%s\n%s", exit, out, errOut)
	}

	// A record whose recorded result differs from what the program computes.
	tampered := filepath.Join(dir, "tampered.json")
	rec["result"] = map[string]any{"sums": []any{}}
	write := func(path string, v any) {
		b, _ := json.Marshal(v)
		if err := os.WriteFile(path, b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(tampered, rec)
	if _, errOut, exit := runBinary(t, "", "replay", tampered); exit != 1 || !strings.Contains(errOut, "REPLAY_DIFFERS") {
		t.Fatalf("tampered record: exit %d\n%s", exit, errOut)
	}

	// A program that makes a call the record does not hold.
	rec["code"] = `return await everything.get_sum({a: 100, b: 1})`
	write(tampered, rec)
	out, errOut, exit = runBinary(t, "", "replay", tampered)
	if exit != 1 || !strings.Contains(out, "the record has no (further) call everything.get-sum") {
		t.Fatalf("unrecorded call: exit %d\n%s\n%s", exit, out, errOut)
	}
	if _, _, exit := runBinary(t, "", "replay", filepath.Join(dir, "missing.json")); exit != 2 {
		t.Fatalf("missing file: exit %d, want 2", exit)
	}
}
