package main

import (
	"strings"
	"testing"
)

func TestJsrunBinary(t *testing.T) {
	cases := []struct {
		name, stdin      string
		stdout, errorOut string
		code             int
	}{
		{"echo", `{"source":"emit(read_input())","input":"hello","limits":{"output_kb":4}}`,
			`{"output":"hello"}` + "\n", "", 0},
		{"output limit", `{"source":"emit('a'.repeat(1500))","input":"","limits":{"output_kb":1}}`,
			`{"output":"` + strings.Repeat("a", 1024) + `"}` + "\n", `{"code":"OUTPUT_LIMIT","message":"output exceeded 1 KB"}` + "\n", 5},
		{"timeout", `{"source":"for(;;){}","input":"","limits":{"wall_ms":100}}`,
			"", `{"code":"TIMEOUT","message":"execution exceeded 100 ms"}` + "\n", 4},
		{"eval error", `{"source":"throw new Error('nope')","input":""}`,
			"", `{"code":"EVAL_ERROR","message":"Error: nope"}` + "\n", 3},
		{"invalid", `{"source":"1"}`,
			"", `{"code":"INVALID_REQUEST","message":"\"input\" (string) is required"}` + "\n", 2},
		{"heap", `{"source":"const a=[]; for(;;) a.push([1,2,3])","input":"","limits":{"wall_ms":20000,"heap_mb":16}}`,
			"", `{"code":"HEAP_LIMIT","message":"JavaScript heap limit of 16 MB exceeded"}` + "\n", 6},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			stdout, stderr, code := runBinary(t, c.stdin, "jsrun")
			if stdout != c.stdout || stderr != c.errorOut || code != c.code {
				t.Fatalf("got exit %d\nstdout %q\nstderr %q\nwant exit %d\nstdout %q\nstderr %q",
					code, stdout, stderr, c.code, c.stdout, c.errorOut)
			}
		})
	}
}

// TestHelpOnEveryCommand: every command has --help, and only serve offers
// --http (issue 33, 8: tools --help and exec --help offered it, where it
// means nothing).
func TestHelpOnEveryCommand(t *testing.T) {
	for name := range commands {
		_, stderr, code := runBinary(t, "", name, "--help")
		if code != 0 || !strings.Contains(stderr, "Usage: isogate "+name) {
			t.Errorf("%s --help: exit %d, stderr %q", name, code, stderr)
		}
		if offers := strings.Contains(stderr, "--http"); offers != (name == "serve") {
			t.Errorf("%s --help offers --http: %v", name, offers)
		}
	}
}

// Issue 25 (11): `jsrun --isolation thread` ran untrusted input in-process
// with no trust check, where an Intl.Segmenter bomb aborted the process
// with V8's fatal OOM instead of a JSON error. Thread isolation now needs
// --trusted-code; without it the answer is a jsrun JSON error.
func TestJsrunThreadIsolationNeedsTrust(t *testing.T) {
	bomb := `{"source":"const s=new Intl.Segmenter('en',{granularity:'grapheme'}); const a=[]; for(;;) a.push([...s.segment('x'.repeat(1e6))])","input":"","limits":{"wall_ms":20000,"heap_mb":16}}`
	stdout, stderr, code := runBinary(t, bomb, "jsrun", "--isolation", "thread")
	if stdout != "" || code != 2 || !strings.HasPrefix(stderr, `{"code":"INVALID_REQUEST","message":"--isolation thread runs the script inside this process`) {
		t.Fatalf("thread isolation without --trusted-code: exit %d\nstdout %q\nstderr %q", code, stdout, stderr)
	}
	if _, stderr, code := runBinary(t, "{}", "jsrun", "--isolation", "threads"); code != 2 || !strings.Contains(stderr, `"INVALID_REQUEST"`) {
		t.Fatalf("an unknown isolation: exit %d, stderr %q", code, stderr)
	}
	stdout, _, code = runBinary(t, `{"source":"emit(read_input())","input":"hi"}`, "jsrun", "--isolation", "thread", "--trusted-code")
	if stdout != `{"output":"hi"}`+"\n" || code != 0 {
		t.Fatalf("trusted thread isolation: exit %d, stdout %q", code, stdout)
	}
}
