package interop

import (
	"encoding/json"
	"slices"
	"strings"
	"syscall"
	"testing"
)

// saveProgramsReport is the report of scripts/save_programs.mjs.
type saveProgramsReport struct {
	Saves []struct {
		Name, Text, Code string
		IsError          bool
		Call             *struct {
			Text, Code string
			IsError    bool
		}
	}
	Tools []string
}

// TestTypeScriptSDKSaveRefusesCodeThatDoesNotParse: save_program keeps
// only code that can run. The official TypeScript SDK client saves code
// with a syntax error, code with a stray brace on its second line, and
// code that declares args itself (it is given as a constant): each is
// refused with PROGRAM_INVALID naming the syntax error (at the code's own
// line and column when it is the code's alone), nothing is saved, no tool
// is listed. A TypeScript program beside them is saved and its call
// answers.
func TestTypeScriptSDKSaveRefusesCodeThatDoesNotParse(t *testing.T) {
	t.Parallel()
	gw := startHTTPEnv("ISOGATE_STORE__DATA_DIR=" + t.TempDir())
	t.Cleanup(func() {
		if gw.cmd != nil && gw.cmd.Process != nil {
			_ = gw.cmd.Process.Signal(syscall.SIGTERM)
			_ = gw.cmd.Wait()
		}
	})
	if gw.err != nil {
		t.Fatalf("HTTP gateway: %v\n%s", gw.err, gw.logs)
	}
	saves, _ := json.Marshal([]map[string]any{
		{"name": "broken", "description": "d", "code": "const = ;"},
		{"name": "brace", "description": "d", "code": "return 1;\n}}}"},
		{"name": "own_args", "description": "d", "code": "const args = 5; return args"},
		{"name": "typed", "description": "d", "code": "const n: number = args.n; return n * 2", "parameters": "{ n: number }"},
	})
	var r saveProgramsReport
	runNodeInto(t, &r, "save_programs.mjs", "--saves", string(saves), "--args", `{"n": 21}`, "--http", gw.url)
	want := map[string]string{"broken": "(line 1, column 7)", "brace": "(line 2, column 2)", "own_args": "args"}
	for _, s := range r.Saves {
		if s.Name == "typed" {
			if s.IsError || s.Call == nil || s.Call.IsError || s.Call.Text != "42" {
				t.Errorf("typed: save %q, call %+v", s.Text, s.Call)
			}
			continue
		}
		if !s.IsError || s.Code != "PROGRAM_INVALID" || !strings.Contains(s.Text, "SyntaxError") || !strings.Contains(s.Text, want[s.Name]) {
			t.Errorf("%s: saved or refused otherwise: %q (%s); want PROGRAM_INVALID with the SyntaxError %s", s.Name, s.Text, s.Code, want[s.Name])
		}
	}
	if !slices.Equal(r.Tools, []string{"program_typed"}) {
		t.Errorf("tools listed: %v, want program_typed alone", r.Tools)
	}
}
