package v8sandbox_test

import (
	"testing"

	"github.com/isogate/isogate/v8sandbox"
	"github.com/isogate/isogate/v8sandbox/sandboxtest"
)

// TestRunnerSuite runs the behaviour suite and the hostile corpus shared
// with the process-isolated runner against the in-process pool.
func TestRunnerSuite(t *testing.T) {
	sandboxtest.Run(t, func(t *testing.T, slots int) v8sandbox.Runner {
		return v8sandbox.NewPool(v8sandbox.Options{Workers: slots})
	}, sandboxtest.Options{InProcess: true})
}
