package procpool

import (
	"testing"

	"github.com/isogate/isogate/v8sandbox"
	"github.com/isogate/isogate/v8sandbox/sandboxtest"
)

// TestRunnerSuite runs the behaviour suite and the hostile corpus shared
// with the in-process pool against worker processes.
//
// It runs under strict confinement (a worker that lacks a layer is refused,
// so every test here runs fully confined) wherever the host has every
// layer; elsewhere under best-effort, saying why.
func TestRunnerSuite(t *testing.T) {
	// Parallel with TestCheckerEscapeDrill and TestRealBinary, which wait
	// mostly on the linker: the package's longest tests, and nothing
	// process-wide is shared (each starts pools of its own).
	t.Parallel()
	mode := ConfinementStrict
	if lacks := hostLacks(); lacks != "" {
		t.Logf("this host cannot confine workers fully (%s): the suite runs under best-effort", lacks)
		mode = ConfinementBestEffort
	}
	sandboxtest.Run(t, func(t *testing.T, slots int) v8sandbox.Runner {
		workers := min(slots, 2)
		return newTestPool(t, Options{Workers: workers, SlotsPerWorker: (slots + workers - 1) / workers, Confinement: mode})
	}, sandboxtest.Options{})
}
