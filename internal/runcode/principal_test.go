package runcode

import (
	"context"
	"testing"

	"github.com/isogate/isogate/config"
	"github.com/isogate/isogate/internal/authn"
	"github.com/isogate/isogate/v8sandbox"
)

// principalRunner records the principal of each job it runs.
type principalRunner struct {
	v8sandbox.Runner
	got []string
}

func (r *principalRunner) Run(ctx context.Context, job v8sandbox.Job, host v8sandbox.Host) (v8sandbox.Result, error) {
	r.got = append(r.got, job.Principal)
	return r.Runner.Run(ctx, job, host)
}

// TestRunCarriesThePrincipal: a run is for the caller's principal (the
// key a process runner keeps workers apart by), "" without one.
func TestRunCarriesThePrincipal(t *testing.T) {
	rec := &principalRunner{Runner: testPool()}
	r, err := New(Options{Runner: rec, Config: config.RunCodeConfig{}})
	if err != nil {
		t.Fatal(err)
	}
	alice := authn.WithPrincipal(context.Background(), &authn.Principal{Name: "alice"})
	for _, ctx := range []context.Context{alice, context.Background()} {
		if out := r.Run(ctx, Input{Code: `return 1`}); !out.OK {
			t.Fatalf("run failed: %+v", out.Error)
		}
	}
	if len(rec.got) != 2 || rec.got[0] != "alice" || rec.got[1] != "" {
		t.Errorf("runs were for %q, want alice then \"\"", rec.got)
	}
}
