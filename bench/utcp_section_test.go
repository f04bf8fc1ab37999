package bench

import (
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// TestUTCPSection runs the UTCP comparison once per program and contender
// (results checked) when bench/utcp is installed by `make bench`; the
// figures themselves are for bench/RESULTS.md.
func TestUTCPSection(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and serves the gateway")
	}
	root, err := moduleRoot()
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := utcpPaths(root); err != nil {
		t.Skipf("%v", err)
	}
	cfg := DefaultReportConfig(true)
	cfg.Measure = MeasureConfig{Warmup: 1, MinRuns: 1, MaxRuns: 1, Rounds: 1}
	cfg.Figures = NewFigures()
	body, err := utcpSection(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("\n%s", body)
	if strings.Contains(body, "error:") || strings.Contains(body, "Skipped") {
		t.Fatalf("a contender failed:\n%s", body)
	}
	for _, w := range utcpWorkloads() {
		if !strings.Contains(body, "| "+w.name+" (") {
			t.Fatalf("no row for %s:\n%s", w.name, body)
		}
		for _, c := range []string{utcpContender, isogateContender("process")} {
			if _, ok := cfg.Figures.Get(figUTCP(w.name, c)); !ok {
				t.Errorf("%s on %s: no figure recorded for the issue-26 table", w.name, c)
			}
		}
	}
}

// TestUTCPHarnessReportsFailures: a program that throws is an error result
// from the UTCP harness, not a result, so a broken program cannot be
// measured as a fast one.
func TestUTCPHarnessReportsFailures(t *testing.T) {
	root, err := moduleRoot()
	if err != nil {
		t.Fatal(err)
	}
	dir, node, err := utcpPaths(root)
	if err != nil {
		t.Skipf("%v", err)
	}
	everything := root + "/examples/node_modules/@modelcontextprotocol/server-everything/dist/index.js"
	cmd := exec.Command(node, "server.mjs", "everything", "node", everything, "stdio")
	cmd.Dir = dir
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	cs, err := connectStdio(ctx, cmd)
	if err != nil {
		t.Fatal(err)
	}
	c := &mcpContender{name: "UTCP", cs: cs, programs: map[string]string{
		"throws": `throw new Error("boom-7")`,
		"echo":   `return everything.everything_echo({message: "hi"})`,
	}}
	defer c.Close()
	if _, err := c.Run(ctx, &Workload{Name: "throws"}); err == nil || !strings.Contains(err.Error(), "boom-7") {
		t.Fatalf("throwing program: err = %v, want one naming boom-7", err)
	}
	got, err := c.Run(ctx, &Workload{Name: "echo"})
	if err != nil {
		t.Fatal(err)
	}
	if err := (&Workload{Name: "echo", Want: `"Echo: hi"`}).Check(got); err != nil {
		t.Fatal(err)
	}
}
