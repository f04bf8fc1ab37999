package main

import (
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"testing"
)

// updateGolden rewrites testdata/output/*.golden with what the commands
// print now: `go test -run TestReportOutputBytes ./cmd/isogate -update`.
var updateGolden = flag.Bool("update", false, "rewrite the golden files of TestReportOutputBytes")

// v8VersionField is the engine's version in run-code's output, the one part
// that changes with a dependency rather than with isogate.
var v8VersionField = regexp.MustCompile(`"v8_version": "[^"]*"`)

// TestReportOutputBytes pins, byte for byte, what `check` (text and
// --json), `check --saved` (text and --json) and `run-code` print for
// programs whose diagnostics, syntax error and result hold <, > and &:
// the reports' JSON escapes them (\u003c, as encoding/json does by
// default), run-code's output keeps them as they are. Golden files in
// testdata/output, written by -update.
func TestReportOutputBytes(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "isogate.yaml")
	if err := os.WriteFile(cfg, []byte("server:\n  cache_dir: "+filepath.Join(dir, "cache")+"\nstore:\n  data_dir: "+filepath.Join(dir, "data")+
		"\nsandbox:\n  isolation: thread\n  trusted_code: true\nbackends: {}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	const types = `const y: Promise<number> = 1; const z: {a: 1} & {b: 2} = {a: 1}; return [y, z]`
	for _, c := range []struct {
		golden string
		args   []string
		code   int
	}{
		{"check.txt", []string{"check", "-e", types}, 0},
		{"check.json", []string{"check", "--json", "-e", types}, 0},
		{"check-syntax.json", []string{"check", "--json", "-e", "return <a>&"}, 1},
		{"check-saved.txt", []string{"check", "--saved"}, 0},
		{"check-saved.json", []string{"check", "--saved", "--json"}, 0},
		{"run-code.json", []string{"run-code", "-e", `console.log("<b>&"); return {s: "<a>&"}`}, 0},
	} {
		args := append(c.args, "--config", cfg)
		if c.args[0] == "check" {
			args = append(args, "--log-level", "error")
		}
		out, stderr, code := runBinary(t, "", args...)
		if code != c.code {
			t.Errorf("%v: exit %d, want %d\nstderr:\n%s", c.args, code, c.code, stderr)
			continue
		}
		out = v8VersionField.ReplaceAllString(out, `"v8_version": "V8"`)
		path := filepath.Join("testdata", "output", c.golden)
		if *updateGolden {
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, []byte(out), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if out != string(want) {
			t.Errorf("%v prints\n%s\nwant (%s)\n%s", c.args, out, path, want)
		}
	}
}
