package procpool

import (
	"testing"

	"github.com/isogate/isogate/v8sandbox"
	"github.com/isogate/isogate/v8sandbox/sandboxtest"
)

// TestRunnerSuite runs the behaviour suite and the hostile corpus shared
// with the in-process pool against worker processes.
func TestRunnerSuite(t *testing.T) {
	sandboxtest.Run(t, func(t *testing.T, slots int) v8sandbox.Runner {
		workers := min(slots, 2)
		return newTestPool(t, Options{Workers: workers, SlotsPerWorker: (slots + workers - 1) / workers})
	}, sandboxtest.Options{})
}
