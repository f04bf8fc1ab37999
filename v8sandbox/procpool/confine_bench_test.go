package procpool

import (
	"context"
	"testing"

	"github.com/isogate/isogate/v8sandbox"
)

// BenchmarkConfinement measures what confinement costs: a worker's start
// (a new pool's first run), the warm trivial run and the sync host call,
// with confinement off and strict (every layer), one after the other in
// one invocation so that the two can be compared (issue 24's goal: no
// measurable regression of the warm path, start-up within +5 ms):
//
//	go test -run XXX -bench Confinement -benchtime 20x ./v8sandbox/procpool/
func BenchmarkConfinement(b *testing.B) {
	modes := []ConfinementMode{ConfinementOff, ConfinementStrict}
	if lacks := hostLacks(); lacks != "" {
		modes = []ConfinementMode{ConfinementOff, ConfinementBestEffort}
		b.Logf("this host cannot confine workers fully (%s): comparing with best-effort", lacks)
	}
	job := v8sandbox.Job{Source: `1 + 1`, AwaitResult: true}
	for _, mode := range modes {
		b.Run("start/"+string(mode), func(b *testing.B) {
			cmd := workerCommand(b)
			for b.Loop() {
				p, err := New(Options{Workers: 1, SlotsPerWorker: 1, Confinement: mode, Command: cmd, Logger: quietLogger(b)})
				if err != nil {
					b.Fatal(err)
				}
				if res, err := p.Run(context.Background(), job, nil); err != nil || string(res.Value) != "2" {
					b.Fatal(res.Value, err)
				}
				p.Close()
			}
		})
		b.Run("trivial/"+string(mode), func(b *testing.B) {
			benchTrivial(b, newTestPool(b, Options{Workers: 1, SlotsPerWorker: 1, Confinement: mode}))
		})
		b.Run("hostcall/"+string(mode), func(b *testing.B) {
			benchHostCalls(b, newTestPool(b, Options{Workers: 1, SlotsPerWorker: 1, Confinement: mode}))
		})
	}
}
