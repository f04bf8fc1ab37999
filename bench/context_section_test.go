package bench

import (
	"context"
	"os"
	"testing"
	"time"
)

// TestContextBenchmark runs the context benchmark once: every task gives
// the same answer directly, through code mode and through passthrough (and
// the answer computed from the files), and code mode receives at least
// 90 % fewer bytes than direct tool calls on the multi-step tasks.
func TestContextBenchmark(t *testing.T) {
	if testing.Short() {
		t.Skip("builds isogate and starts nine npm servers")
	}
	root, err := moduleRoot()
	if err != nil {
		t.Fatal(err)
	}
	for _, pkg := range []string{"server-filesystem", "server-memory", "server-everything"} {
		if _, err := npmServer(root, pkg); err != nil {
			if os.Getenv("CI") != "" {
				t.Fatal(err)
			}
			t.Skip(err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	bin, err := buildIsogate(ctx, root)
	if err != nil {
		t.Fatal(err)
	}
	run, err := RunContextBenchmark(ctx, root, bin)
	if err != nil {
		t.Fatal(err)
	}
	t.Log("\n" + run.Markdown())
	for _, p := range run.Check() {
		t.Error(p)
	}
	if len(run.Tasks) < 8 {
		t.Errorf("%d tasks, want at least 8", len(run.Tasks))
	}
	if _, without := run.Reduction(); without < 90 {
		t.Errorf("code mode received %.1f %% fewer bytes than direct calls on multi-step tasks, want ≥ 90 %%", without)
	}
}
