package bench

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/evanw/esbuild/pkg/api"

	"github.com/isogate/isogate/bench/conformance"
)

// TestConformance runs the conformance set: V8 must pass every check (raw
// and through the code-mode esbuild step); goja's failures are logged.
func TestConformance(t *testing.T) {
	if n := len(conformance.Checks); n < 60 {
		t.Fatalf("only %d conformance checks", n)
	}
	seen := map[string]bool{}
	for _, c := range conformance.Checks {
		if seen[c.Name] {
			t.Errorf("duplicate check %q", c.Name)
		}
		seen[c.Name] = true
	}
	for _, c := range []struct {
		variant string
		raw     bool
		strict  bool
	}{
		{VariantV8Pool, true, true},
		{VariantV8Pool, false, true},
		{VariantGojaSync, true, false},
		{VariantGojaSync, false, false},
		{VariantGojaLoop, true, false},
	} {
		name := c.variant
		if !c.raw {
			name += "+esbuild"
		}
		t.Run(name, func(t *testing.T) {
			v := shared.byName(t, c.variant)
			out := conformance.Run(context.Background(), conformance.Checks, 10*time.Second, ConformanceRunner(v, c.raw))
			for _, o := range out {
				if o.Pass {
					continue
				}
				if c.strict && (c.raw || !o.Check.SourceSensitive()) {
					t.Errorf("%s: %s", o.Check.Name, o.Detail)
				} else {
					t.Logf("fails %s (%s): %s", o.Check.Name, o.Check.Edition, o.Detail)
				}
			}
			t.Logf("%s passes %d / %d", name, conformance.Passed(out), len(out))
		})
	}
}

// TestGojaTarget runs the conformance set on goja through esbuild at every
// target and checks that GojaTarget passes the most checks.
func TestGojaTarget(t *testing.T) {
	if raceEnabled || testing.Short() {
		t.Skip("slow under -race or -short")
	}
	v := NewGojaSync()
	defer v.Close()
	passed := map[api.Target]int{}
	best := 0
	for _, target := range []api.Target{api.ES2015, api.ES2016, api.ES2017, api.ES2018, api.ES2019, api.ES2020, api.ES2021, api.ES2022} {
		run := func(ctx context.Context, body string) (json.RawMessage, error) {
			js, err := Compile(body, target)
			if err != nil {
				return nil, err
			}
			return v.Run(ctx, &Workload{Name: "target", script: js})
		}
		out := conformance.Run(context.Background(), conformance.Checks, 10*time.Second, run)
		passed[target] = conformance.Passed(out)
		best = max(best, passed[target])
		t.Logf("%s: %d / %d", targetName(target), passed[target], len(out))
	}
	if passed[GojaTarget] < best {
		t.Errorf("GojaTarget %s passes %d checks, another target passes %d", targetName(GojaTarget), passed[GojaTarget], best)
	}
}
