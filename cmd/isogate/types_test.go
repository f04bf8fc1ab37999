package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestTypesCommandTypeChecks runs `isogate types` on the example
// configuration (the real server-everything and server-filesystem) and
// compiles the output with the pinned TypeScript compiler.
func TestTypesCommandTypeChecks(t *testing.T) {
	example, _ := filepath.Abs("../../examples/isogate.yaml")
	tsc, _ := filepath.Abs("../../interop/node_modules/.bin/tsc")
	for _, p := range []string{tsc, filepath.Join(filepath.Dir(example), "node_modules/@modelcontextprotocol/server-filesystem")} {
		if _, err := os.Stat(p); err != nil {
			if os.Getenv("CI") != "" {
				t.Fatal(err)
			}
			t.Skipf("not installed (make deps): %v", err)
		}
	}
	t.Setenv("ISOGATE_SERVER__CACHE_DIR", t.TempDir())
	dts, stderr, code := runBinary(t, "", "types", "--config", example)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{"declare const everything: {\n", "declare const filesystem: {\n",
		"  get_sum(args: EverythingGetSumInput): Promise<unknown>;\n",
		"  get_structured_content(args: EverythingGetStructuredContentInput): Promise<EverythingGetStructuredContentOutput>;\n"} {
		if !strings.Contains(dts, want) {
			t.Errorf("types output lacks %q:\n%s", want, dts)
		}
	}
	path := filepath.Join(t.TempDir(), "isogate.d.ts")
	if err := os.WriteFile(path, []byte(dts), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(tsc, "--noEmit", "--strict", path).CombinedOutput(); err != nil {
		t.Fatalf("tsc --noEmit: %v\n%s", err, out)
	}

	one, _, code := runBinary(t, "", "types", "--config", example, "--backend", "filesystem")
	if code != 0 || strings.Contains(one, "everything") || !strings.Contains(one, "declare const filesystem") {
		t.Errorf("--backend filesystem (exit %d):\n%s", code, one)
	}
	if _, stderr, code := runBinary(t, "", "types", "--config", example, "--backend", "nope"); code != 1 || !strings.Contains(stderr, `"nope"`) {
		t.Errorf("--backend nope: exit %d, %s", code, stderr)
	}
}
