package jsrun

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/isogate/isogate/v8sandbox"
)

var pool = v8sandbox.NewPool(v8sandbox.Options{Workers: 2})

// call runs a request body through the whole contract.
func call(t *testing.T, body string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errb bytes.Buffer
	code = Main(context.Background(), pool, strings.NewReader(body), &out, &errb)
	return out.String(), errb.String(), code
}

func decodeError(t *testing.T, stderr string) (code, message string) {
	t.Helper()
	var e struct{ Code, Message string }
	if strings.Count(stderr, "\n") != 1 {
		t.Fatalf("stderr is not one line: %q", stderr)
	}
	if err := json.Unmarshal([]byte(stderr), &e); err != nil {
		t.Fatalf("stderr is not JSON: %q", stderr)
	}
	return e.Code, e.Message
}

func TestRun_EmitReadInput_Succeeds(t *testing.T) {
	stdout, stderr, code := call(t, `{"source":"emit(read_input())","input":"hello","limits":{"output_kb":4}}`)
	if code != 0 || stderr != "" {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	if stdout != `{"output":"hello"}`+"\n" {
		t.Fatalf("stdout = %q", stdout)
	}
}

func TestRun_OutputLimit_TruncatesAndErrors(t *testing.T) {
	stdout, stderr, code := call(t, `{"source":"emit('a'.repeat(1500))","input":"","limits":{"output_kb":1}}`)
	if code != ExitCode(v8sandbox.CodeOutputLimit) {
		t.Fatalf("exit %d", code)
	}
	var out struct{ Output string }
	if err := json.Unmarshal([]byte(stdout), &out); err != nil {
		t.Fatalf("stdout %q: %v", stdout, err)
	}
	if out.Output != strings.Repeat("a", 1024) {
		t.Fatalf("output has %d bytes, want 1024", len(out.Output))
	}
	if c, m := decodeError(t, stderr); c != "OUTPUT_LIMIT" || m != "output exceeded 1 KB" {
		t.Fatalf("error = %s %q", c, m)
	}
}

func TestRun_OutputLimit_CutsOnUTF8Boundary(t *testing.T) {
	// 1023 ASCII bytes then a 3-byte rune: only the ASCII fits.
	stdout, _, code := call(t, `{"source":"emit('a'.repeat(1023)); emit('€€')","input":"","limits":{"output_kb":1}}`)
	if code != ExitCode(v8sandbox.CodeOutputLimit) {
		t.Fatalf("exit %d", code)
	}
	var out struct{ Output string }
	json.Unmarshal([]byte(stdout), &out)
	if out.Output != strings.Repeat("a", 1023) {
		t.Fatalf("output = %d bytes %q", len(out.Output), out.Output[1000:])
	}
}

func TestRun_Timeout_Interrupts(t *testing.T) {
	start := time.Now()
	stdout, stderr, code := call(t, `{"source":"for(;;){}","input":"","limits":{"wall_ms":100}}`)
	elapsed := time.Since(start)
	if code != ExitCode(v8sandbox.CodeTimeout) || stdout != "" {
		t.Fatalf("exit %d stdout %q", code, stdout)
	}
	if c, m := decodeError(t, stderr); c != "TIMEOUT" || m != "execution exceeded 100 ms" {
		t.Fatalf("error = %s %q", c, m)
	}
	if elapsed > 5*time.Second { // a hang guard, not a performance assertion
		t.Fatalf("took %v", elapsed)
	}
}

func TestRun_OnlyEmitAndReadInput(t *testing.T) {
	src := `emit(['require','console','setTimeout','setInterval','queueMicrotask','fetch','process'].map(n => typeof globalThis[n]).join(','))`
	body, _ := json.Marshal(map[string]any{"source": src, "input": ""})
	stdout, _, code := call(t, string(body))
	want := `{"output":"undefined,undefined,undefined,undefined,undefined,undefined,undefined"}` + "\n"
	if code != 0 || stdout != want {
		t.Fatalf("exit %d stdout %q", code, stdout)
	}
	stdout, _, _ = call(t, `{"source":"emit(1); emit({}); emit(); emit(null)","input":""}`)
	if stdout != `{"output":"1[object Object]undefinednull"}`+"\n" {
		t.Fatalf("String() conversion: %q", stdout)
	}
}

func TestRun_EvalError(t *testing.T) {
	for _, src := range []string{`throw new Error("bad thing")`, `emit(`} {
		body, _ := json.Marshal(map[string]any{"source": src, "input": ""})
		stdout, stderr, code := call(t, string(body))
		if code != ExitCode(v8sandbox.CodeEval) || stdout != "" {
			t.Fatalf("%s: exit %d stdout %q", src, code, stdout)
		}
		c, m := decodeError(t, stderr)
		if c != "EVAL_ERROR" || !strings.Contains(m, "Error") {
			t.Fatalf("%s: error = %s %q", src, c, m)
		}
	}
}

func TestRun_HeapLimit(t *testing.T) {
	_, stderr, code := call(t, `{"source":"const a=[]; for(;;) a.push({x:[1,2,3]})","input":"","limits":{"wall_ms":20000,"heap_mb":16}}`)
	if c, _ := decodeError(t, stderr); c != "HEAP_LIMIT" || code != ExitCode(v8sandbox.CodeHeapLimit) {
		t.Fatalf("error %s exit %d", c, code)
	}
}

func TestRun_InvalidRequests(t *testing.T) {
	for _, body := range []string{
		``, `not json`, `[]`, `{"input":""}`, `{"source":"1"}`, `{"source":1,"input":""}`,
		`{"source":"1","input":2}`, `{"source":"1","input":"","limits":{"wall_ms":"x"}}`,
		`{"source":"1","input":"","limits":{"wall_ms":0}}`, `{"source":"1","input":"","extra":1}`,
		`{"source":"1","input":""} {}`,
		// Out of range: must not overflow the deadline or the output buffer.
		`{"source":"1","input":"","limits":{"output_kb":9223372036854775807}}`,
		`{"source":"1","input":"","limits":{"output_kb":9223372036854775}}`,
		`{"source":"1","input":"","limits":{"wall_ms":9223372036854775807}}`,
		`{"source":"1","input":"","limits":{"wall_ms":9223372036855}}`,
		`{"source":"1","input":"","limits":{"wall_ms":600001}}`,
		`{"source":"1","input":"","limits":{"heap_mb":4097}}`,
		`{"source":"1","input":"","limits":{"output_kb":-1}}`,
		// A NUL would silently cut the program short.
		`{"source":"emit('a');\u0000throw new Error('never runs')","input":""}`,
	} {
		stdout, stderr, code := call(t, body)
		if code != ExitCode(CodeInvalidRequest) || stdout != "" {
			t.Errorf("%q: exit %d stdout %q", body, code, stdout)
			continue
		}
		if c, m := decodeError(t, stderr); c != "INVALID_REQUEST" || m == "" {
			t.Errorf("%q: error %s %q", body, c, m)
		}
	}
}

func TestRun_LimitsAtTheirMaximum_Accepted(t *testing.T) {
	body := fmt.Sprintf(`{"source":"emit('ok')","input":"","limits":{"wall_ms":%d,"output_kb":%d}}`, MaxWallMS, MaxOutputKB)
	stdout, stderr, code := call(t, body)
	if code != 0 || stdout != `{"output":"ok"}`+"\n" {
		t.Fatalf("exit %d stdout %q stderr %q", code, stdout, stderr)
	}
}

func TestExitCodesAreDistinct(t *testing.T) {
	seen := map[int]v8sandbox.Code{}
	for _, c := range []v8sandbox.Code{"", CodeInvalidRequest, v8sandbox.CodeEval, v8sandbox.CodeTimeout,
		v8sandbox.CodeOutputLimit, v8sandbox.CodeHeapLimit, v8sandbox.CodeCancelled, v8sandbox.CodeSandboxCrashed, v8sandbox.CodeInternal} {
		if prev, dup := seen[ExitCode(c)]; dup {
			t.Errorf("%s and %s share exit code %d", c, prev, ExitCode(c))
		}
		seen[ExitCode(c)] = c
	}
}
