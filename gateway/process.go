package gateway

import (
	"log/slog"

	"github.com/isogate/isogate/config"
	"github.com/isogate/isogate/v8sandbox"
	"github.com/isogate/isogate/v8sandbox/procpool"
)

// slotsPerWorker is how many runs share one sandbox worker process: a
// process that dies takes its neighbours' runs with it, so keep it small.
const slotsPerWorker = 4

// newProcessRunner runs programs in sandbox worker processes (this binary's
// hidden sandbox-worker command), so that no script can take the gateway down.
func newProcessRunner(cfg *config.Config, limits v8sandbox.Limits, logger *slog.Logger) (v8sandbox.Runner, error) {
	slots := min(slotsPerWorker, cfg.Sandbox.MaxConcurrent)
	return procpool.New(procpool.Options{
		Workers:        (cfg.Sandbox.MaxConcurrent + slots - 1) / slots,
		SlotsPerWorker: slots,
		Defaults:       limits,
		Logger:         logger,
	})
}
