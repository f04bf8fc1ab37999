package procpool

import (
	"testing"
	"time"
)

// A worker's start is reported phase by phase, both processes on one
// clock: every phase is there once, in causal order (the worker's
// constructor after the parent began the spawn, its init read after the
// parent wrote it, ready read after the worker built it), with the worker's
// CPU time where it can read it (before seccomp) and none after.
func TestWorkerStartPhases(t *testing.T) {
	p := newTestPool(t, Options{Workers: 1, SlotsPerWorker: 1})
	ws := p.Stats().Workers
	if len(ws) != 1 {
		t.Fatalf("%d workers", len(ws))
	}
	phases := ws[0].Start
	at := map[string]StartPhase{}
	for _, ph := range phases {
		if _, dup := at[ph.Name]; dup {
			t.Errorf("phase %q twice", ph.Name)
		}
		at[ph.Name] = ph
	}
	want := []string{phaseSpawn, phaseConstructor, phaseConfined, phaseGoMain, phaseHardened, phaseSeccomp,
		phaseInitRead, phaseV8Platform, phaseSnapshot, phaseWarm, phaseReadySent, phaseReady}
	for _, name := range append(want, phaseExeced, phaseInitSent) {
		if _, ok := at[name]; !ok {
			t.Fatalf("no phase %q in %+v", name, phases)
		}
	}
	for i := 1; i < len(want); i++ {
		if a, b := at[want[i-1]], at[want[i]]; b.At < a.At {
			t.Errorf("%q at %v, before %q at %v", b.Name, b.At, a.Name, a.At)
		}
	}
	if at[phaseSpawn].At != 0 || at[phaseReady].At <= 0 || at[phaseReady].At > time.Minute {
		t.Errorf("spawn at %v, ready at %v", at[phaseSpawn].At, at[phaseReady].At)
	}
	for _, name := range []string{phaseConstructor, phaseConfined, phaseGoMain, phaseHardened} {
		if at[name].CPU <= 0 || at[name].Parent {
			t.Errorf("%q: CPU %v, parent %v: want the worker's CPU time", name, at[name].CPU, at[name].Parent)
		}
	}
	if at[phaseGoMain].CPU < at[phaseConfined].CPU {
		t.Errorf("CPU went back: %v then %v", at[phaseConfined].CPU, at[phaseGoMain].CPU)
	}
	if p.Confinement().Level(LayerSeccomp) == LevelOn {
		for _, name := range []string{phaseSeccomp, phaseWarm, phaseReadySent} {
			if at[name].CPU != -1 {
				t.Errorf("%q: CPU %v under seccomp", name, at[name].CPU)
			}
		}
	}
	for _, name := range []string{phaseSpawn, phaseExeced, phaseInitSent, phaseReady} {
		if !at[name].Parent || at[name].CPU != -1 {
			t.Errorf("%q: parent %v, CPU %v", name, at[name].Parent, at[name].CPU)
		}
	}
}
