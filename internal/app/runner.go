package app

import (
	"log/slog"

	"github.com/isogate/isogate/config"
	"github.com/isogate/isogate/v8sandbox"
	"github.com/isogate/isogate/v8sandbox/procpool"
)

// slotsPerWorker is how many runs share one sandbox worker process: a
// process that dies takes its neighbours' runs with it, so keep it small.
const slotsPerWorker = 4

// Sandbox describes a sandbox runner: how programs are isolated, how many
// run at once and under which default limits.
type Sandbox struct {
	// Isolation is config.IsolationProcess (worker processes, this binary's
	// hidden sandbox-worker command) or config.IsolationThread (isolates in
	// this process). "" means process.
	Isolation config.Isolation
	// Concurrent is how many programs run at once; at least 1.
	Concurrent int
	// Limits are a run's default timeout and heap cap.
	Limits v8sandbox.Limits
	// Logger receives the runner's logs; default slog.Default().
	Logger *slog.Logger
	// Confinement is sandbox.confinement for process isolation: strict,
	// best-effort or off; "" means best-effort.
	Confinement string
	// SpareWorkers is sandbox.spare_workers for process isolation: never
	// used worker processes kept ready for principals without one.
	SpareWorkers int
	// IdleWorkersMB is sandbox.idle_workers_mb for process isolation: the
	// memory idle workers kept warm for their principal may hold.
	IdleWorkersMB int
}

// NewRunner builds the runner s describes. It is the one place that maps an
// isolation mode onto a runner.
func NewRunner(s Sandbox) (v8sandbox.Runner, error) {
	concurrent := max(s.Concurrent, 1)
	if s.Isolation == config.IsolationThread {
		return v8sandbox.NewPool(v8sandbox.Options{Workers: concurrent, Defaults: s.Limits, Logger: s.Logger}), nil
	}
	slots := min(slotsPerWorker, concurrent)
	return procpool.New(procpool.Options{
		Workers:        (concurrent + slots - 1) / slots,
		SlotsPerWorker: slots,
		Defaults:       s.Limits,
		Logger:         s.Logger,
		Confinement:    procpool.ConfinementMode(s.Confinement),
		SpareWorkers:   s.SpareWorkers,
		IdleWorkersMB:  s.IdleWorkersMB,
	})
}
