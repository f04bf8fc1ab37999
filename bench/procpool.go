package bench

import (
	"github.com/isogate/isogate/v8sandbox"
	"github.com/isogate/isogate/v8sandbox/procpool"
)

// ProcWorkers is the number of sandbox worker processes of the "v8-proc"
// variant; its pool size is spread over them as V8 threads (slots).
const ProcWorkers = 2

func init() {
	RegisterVariant(VariantSpec{
		Name:  VariantV8Proc,
		Order: 20,
		Label: "the same engine behind process isolation: supervised sandbox worker processes (`procpool.New`, " +
			"2 processes, the pool size spread over them as V8 threads)",
		New: func(cfg VariantConfig) (Variant, error) { return NewV8Proc(cfg.Workers, cfg.WorkerCommand) },
	})
}

// NewV8Proc is variant 2: isogate's engine in ProcWorkers sandbox worker
// processes hosting workers V8 threads in all. command starts a worker
// (nil: this very binary with "sandbox-worker", which then must call
// [ServeWorkerIfRequested] first thing in main or TestMain).
func NewV8Proc(workers int, command []string) (*RunnerVariant, error) {
	procs := min(ProcWorkers, max(workers, 1))
	slots := (max(workers, 1) + procs - 1) / procs
	return NewRunnerVariant(VariantV8Proc, func() (v8sandbox.Runner, error) {
		return procpool.New(procpool.Options{
			Workers:        procs,
			SlotsPerWorker: slots,
			Command:        command,
			Logger:         quietLogger,
		})
	})
}

// ServeWorkerIfRequested turns this process into a sandbox worker when it
// was started as one (first argument "sandbox-worker") and exits when the
// parent is done with it; started with "rss-probe", it measures the RSS of
// concurrent runs in a fresh process (see the targets section) and exits. Call it first thing in main (or TestMain) of any
// binary that runs the "v8-proc" variant with its default command.
func ServeWorkerIfRequested() {
	procpool.RunWorkerIfRequested()
	runRSSProbeIfRequested()
	runSnapshotProbeIfRequested()
	runSoakGatewayIfRequested()
}
