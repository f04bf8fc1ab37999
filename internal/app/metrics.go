package app

import (
	"github.com/isogate/isogate/internal/backend"
	"github.com/isogate/isogate/internal/metrics"
	"github.com/isogate/isogate/v8sandbox"
	"github.com/isogate/isogate/v8sandbox/procpool"
)

// newMetrics builds the gateway's metrics over its backends, sandbox, type
// checker and pending task intents.
func newMetrics(manager *backend.Manager, runner v8sandbox.Runner, checker func() *metrics.Checker, intents func() int,
	stores func() map[string]int64) *metrics.Metrics {
	return metrics.New(metrics.Sources{
		Backends: func() []metrics.BackendState {
			var out []metrics.BackendState
			for _, st := range manager.Status() {
				out = append(out, metrics.BackendState{Name: st.Name, Up: st.State == backend.StateHealthy, Restarts: st.Restarts})
			}
			return out
		},
		Workers:     func() metrics.Workers { return workerStates(runner) },
		Confinement: func() []metrics.LayerLevel { return confinementLevels(runner) },
		Checker:     checker,
		TaskIntents: intents,
		StoreBytes:  stores,
	})
}

// workerStates reads the sandbox workers of either isolation mode.
func workerStates(r v8sandbox.Runner) metrics.Workers {
	switch p := r.(type) {
	case *procpool.Pool:
		st := p.Stats()
		w := metrics.Workers{States: map[string]int{"busy": 0, "idle": 0, "draining": 0, "spare": 0, "parked": 0},
			Deaths: map[string]uint64{"crashed": st.Crashed, "killed": st.Killed, "recycled": st.Recycled, "rebound": st.Rebound}}
		for _, pr := range st.Workers {
			switch {
			case pr.Draining:
				w.States["draining"]++
			case pr.Spare:
				w.States["spare"]++
			case pr.Idle:
				w.States["parked"]++
			case pr.Runs > 0:
				w.States["busy"]++
			default:
				w.States["idle"]++
			}
		}
		return w
	case *v8sandbox.Pool:
		busy := p.Busy()
		return metrics.Workers{States: map[string]int{"busy": busy, "idle": p.Workers() - busy}}
	}
	return metrics.Workers{}
}

// taskIntents is the surface's pending task intents (0 before it is
// built: nothing is served yet).
func (a *App) taskIntents() int {
	if a.Surface == nil {
		return 0
	}
	return a.Surface.TaskIntents()
}
