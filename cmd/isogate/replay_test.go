package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestReplay records a run against the real server-everything (isogate exec
// with server.record_dir), then replays it with no backends: the same
// result and exit 0; a tampered record exits 1; a call the record does not
// hold is an error.
func TestReplay(t *testing.T) {
	cfg, recDir := recordDirConfig(t)
	dir := t.TempDir()
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

// recordDirConfig writes a configuration with server-everything and
// server.record_dir, and returns its path and the record directory.
func recordDirConfig(t *testing.T) (cfg, recDir string) {
	t.Helper()
	dir := t.TempDir()
	cfg = filepath.Join(dir, "isogate.yaml")
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
	return cfg, filepath.Join(dir, "records")
}

// onlyRecord returns the one run record in dir.
func onlyRecord(t *testing.T, dir string) string {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(dir, "*.json"))
	if len(files) != 1 {
		t.Fatalf("record_dir holds %v, want one record", files)
	}
	return files[0]
}

// TestReplayUsesTheRecordedLimits: runs that timed out under a 2 s
// --timeout (in the program, and while a backend call was in flight)
// replay under the recorded 2 s, not the default, and are reproduced:
// exit 0, the same TIMEOUT message. The record names its limits.
func TestReplayUsesTheRecordedLimits(t *testing.T) {
	for name, c := range map[string]struct{ code, want string }{
		"spinning":       {`await everything.get_sum({a: 1, b: 2}); for (;;) {}`, "TIMEOUT: execution exceeded 2000 ms"},
		"waiting a call": {`await everything.get_sum({a: 1, b: 2}); return await everything.trigger_long_running_operation({duration: 30, steps: 2})`, "TIMEOUT: execution exceeded 2000 ms while waiting for everything.trigger-long-running-operation"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			cfg, recDir := recordDirConfig(t)
			_, errOut, exit := runBinary(t, "", "exec", "--config", cfg, "--timeout", "2s", "-e", c.code)
			if exit != 1 || !strings.Contains(errOut, c.want) {
				t.Fatalf("exec: exit %d\n%s", exit, errOut)
			}
			path := onlyRecord(t, recDir)
			raw, _ := os.ReadFile(path)
			if !strings.Contains(string(raw), `"timeout_ms": 2000`) || !strings.Contains(string(raw), `"max_tool_calls": 1000`) {
				t.Fatalf("the record lacks its limits:\n%s", raw)
			}
			out, errOut, exit := runBinary(t, "", "replay", path)
			if msg, _, _ := strings.Cut(strings.TrimSpace(out), "\n\nHint: "); exit != 0 || msg != c.want {
				t.Fatalf("replay: exit %d\nstdout %s\nstderr %s", exit, out, errOut)
			}
			// --timeout still overrides the recorded timeout. A loaded
			// machine may reach the deadline before the replay got to the
			// call the run was waiting on (a different ending, exit 1): that
			// is tried again with twice the time.
			for d := 500 * time.Millisecond; ; d *= 2 {
				out, errOut, exit = runBinary(t, "", "replay", "--timeout", d.String(), path)
				want := fmt.Sprintf("exceeded %d ms", d.Milliseconds())
				if exit == 0 && strings.Contains(out, want) {
					break
				}
				if exit != 1 || !strings.Contains(errOut, "REPLAY_DIFFERS") || !strings.Contains(out, want) || d >= 8*time.Second {
					t.Fatalf("replay --timeout %v: exit %d\nstdout %s\nstderr %s", d, exit, out, errOut)
				}
			}
		})
	}
}

// TestReplayCancelledRun: a run its client cancelled (the official Go
// SDK client cancels its request on the first progress step of a long
// backend call) replays as reproduced: the replay makes the same
// calls and is cancelled where the client cancelled, exit 0. Replay logs
// as the other commands do, at --log-level.
func TestReplayCancelledRun(t *testing.T) {
	cfg, recDir := recordDirConfig(t)
	cmd := exec.Command(binary, "serve", "--config", cfg)
	cmd.Stderr = os.Stderr
	progressed := make(chan struct{}, 16)
	client := mcp.NewClient(&mcp.Implementation{Name: "test-client"}, &mcp.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
			if strings.HasPrefix(req.Params.Message, "everything: ") { // a step of the long call, not "completed everything.get-sum"
				progressed <- struct{}{}
			}
		},
	})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("connecting to isogate serve: %v", err)
	}
	defer cs.Close()
	callCtx, cancelCall := context.WithCancel(ctx)
	go func() {
		select {
		case <-progressed: // the run is inside the long call
			cancelCall()
		case <-callCtx.Done():
		}
	}()
	params := &mcp.CallToolParams{Name: "call_tool_chain", Arguments: map[string]any{"code": `const s = await everything.get_sum({a: 1, b: 2});
return await everything.trigger_long_running_operation({duration: 30, steps: 30})`}}
	params.SetProgressToken("replay-cancel")
	if _, err := cs.CallTool(callCtx, params); err == nil {
		t.Fatal("the cancelled call returned a result")
	}
	var path string
	eventually(t, "the cancelled run's record", func() bool {
		files, _ := filepath.Glob(filepath.Join(recDir, "*.json"))
		if len(files) == 1 {
			path = files[0]
		}
		return path != ""
	})
	var raw []byte
	eventually(t, "the record written whole", func() bool {
		raw, _ = os.ReadFile(path)
		return json.Valid(raw)
	})
	if !strings.Contains(string(raw), `"code": "CANCELLED"`) || !strings.Contains(string(raw), `"run_ended": true`) {
		t.Fatalf("record:\n%s", raw)
	}
	out, errOut, exit := runBinary(t, "", "replay", "--log-level", "info", path)
	if exit != 0 || !strings.HasPrefix(out, "CANCELLED") {
		t.Fatalf("replay: exit %d\nstdout %s\nstderr %s", exit, out, errOut)
	}
	// The log is the other commands' text format (tint: "15:04:05 INF …"),
	// and the message says what failed once.
	if !regexp.MustCompile(`(?m)^\d\d:\d\d:\d\d INF call_tool_chain .*outcome=CANCELLED`).MatchString(errOut) {
		t.Fatalf("replay's log is not the text format of the other commands:\n%s", errOut)
	}
	if _, errOut, _ := runBinary(t, "", "replay", "--log-level", "warn", path); strings.Contains(errOut, "INF") {
		t.Fatalf("--log-level warn logs INFO:\n%s", errOut)
	}
}

// TestReplayRefusedRun: a run sandbox.typecheck: strict refused before it
// started (TYPECHECK_FAILED, PLAN_DENIED) replays as its refusal: exit 0,
// the recorded refusal on stdout, the reason it was not re-run on stderr;
// never the program run against a catalogue it was never meant to meet
// (issue 43: `ReferenceError: everything is not defined`, REPLAY_DIFFERS).
// A tampered refusal that made calls is replayed as a run.
func TestReplayRefusedRun(t *testing.T) {
	cfg, recDir := recordDirConfig(t)
	data, _ := os.ReadFile(cfg)
	data = []byte(strings.Replace(string(data), "sandbox:\n", "sandbox:\n  typecheck: strict\n", 1))
	data = []byte(strings.Replace(string(data), "    args:", "    tools:\n      deny: [echo]\n    args:", 1))
	if err := os.WriteFile(cfg, data, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ code, want string }{
		{`return await everything.no_such_tool({})`, "TYPECHECK_FAILED"},
		{`const n = "echo"; return await everything["echo"]({message: n})`, "PLAN_DENIED"},
	} {
		t.Run(c.want, func(t *testing.T) {
			for _, f := range replayMust(filepath.Glob(filepath.Join(recDir, "*.json"))) {
				_ = os.Remove(f)
			}
			out, errOut, exit := runBinary(t, "", "exec", "--config", cfg, "--log-level", "error", "-e", c.code)
			if exit == 0 || !strings.Contains(out+errOut, c.want) {
				t.Fatalf("exec: exit %d\n%s\n%s", exit, out, errOut)
			}
			path := onlyRecord(t, recDir)
			var rec map[string]any
			if err := json.Unmarshal(replayMust(os.ReadFile(path)), &rec); err != nil {
				t.Fatal(err)
			}
			recErr, _ := rec["error"].(map[string]any)
			if recErr["code"] != c.want {
				t.Fatalf("record's error %v, want %s", recErr, c.want)
			}
			out, errOut, exit = runBinary(t, "", "replay", path)
			if exit != 0 || !strings.Contains(out, recErr["message"].(string)) ||
				!strings.Contains(errOut, "refused before it started ("+c.want+")") || strings.Contains(out+errOut, "ReferenceError") {
				t.Fatalf("replay: exit %d\nstdout:\n%s\nstderr:\n%s", exit, out, errOut)
			}
			// A "refusal" that made calls is no refusal: it is run.
			rec["calls"] = []any{map[string]any{"seq": 1, "backend": "everything", "tool": "echo", "args": map[string]any{"message": "x"}, "ok": true}}
			tampered := filepath.Join(t.TempDir(), "tampered.json")
			if err := os.WriteFile(tampered, replayMust(json.Marshal(rec)), 0o600); err != nil {
				t.Fatal(err)
			}
			if _, errOut, exit := runBinary(t, "", "replay", tampered); exit != 1 || !strings.Contains(errOut, "REPLAY_DIFFERS") {
				t.Fatalf("tampered refusal: exit %d\n%s", exit, errOut)
			}
		})
	}
}

// replayMust returns v, panicking on err (the test's own files).
func replayMust[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
