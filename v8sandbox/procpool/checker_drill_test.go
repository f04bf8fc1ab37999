package procpool

import (
	"testing"
)

// TestCheckerEscapeDrill makes a live checker worker (built with the
// escapedrill tag, its compiler loaded) execute an attacker's actions
// natively, as an exploit of V8 through a crafted program text would:
// reading the gateway's config and environ, opening files, connecting to a
// loopback listener, signalling, ptrace, execve… Under strict confinement
// every one is denied, and the checker worker reports the same layers at
// the same levels as a sandbox worker.
func TestCheckerEscapeDrill(t *testing.T) {
	if testing.Short() {
		t.Skip("builds cmd/isogate with the escapedrill tag")
	}
	// Parallel with TestRunnerSuite, not with TestEscapeDrill: the two
	// drills' targets share a path (the file to create).
	t.Parallel()
	bin := buildIsogate(t, "escapedrill")
	targets, accepted := drillTargets(t)
	outcomes, conf := runDrill(t, bin, Options{Confinement: ConfinementStrict, Checker: true}, targets)
	if outcomes == nil {
		return // skipped: the host cannot confine fully
	}
	if len(outcomes) < 20 {
		t.Fatalf("the drill ran %d actions: %+v", len(outcomes), outcomes)
	}
	for _, o := range outcomes {
		if !o.Denied {
			t.Errorf("ESCAPE from the checker worker: %q was allowed", o.Action)
		}
	}
	if n := accepted.Load(); n != 0 {
		t.Errorf("ESCAPE from the checker worker: the listener accepted %d connections", n)
	}
	sandbox := newTestPool(t, Options{Command: []string{bin, WorkerCommand}, Confinement: ConfinementStrict, Workers: 1, SlotsPerWorker: 1})
	if got, want := conf.String(), sandbox.Confinement().String(); got != want {
		t.Errorf("checker worker: %s\nsandbox worker: %s", got, want)
	}
	t.Logf("checker worker: %s; %d actions, all denied", conf, len(outcomes))
}
