package procpool

import (
	"log/slog"
	"strings"
	"sync"

	"github.com/isogate/isogate/v8sandbox"
)

// Workers share one V8 startup snapshot, and start warm.
//
// A worker's isolates start from a startup snapshot (v8sandbox), which a
// process makes at its first isolate: tens of milliseconds of CPU, paid by
// every worker on its first run. Instead, the parent keeps the snapshot of
// the first worker started with a command and gives it to every later
// worker of that command right after its init frame (raw bytes); and a worker makes its first
// isolate and prepares a context before it answers ready, so that its
// first run (a new principal's, on a spare) costs what a warm run costs.
//
//   - The blob comes only from a ready frame, which a worker sends before
//     it is given any run: it was made by the worker's own start-up code
//     alone, as trusted as a worker's start (the checker's code cache is
//     kept the same way). A second ready frame is a protocol violation.
//   - A blob is keyed to the build that made it (v8sandbox.StartupSnapshot):
//     a worker refuses one from another build, logs why and makes its own.
//   - Held process-wide per command: every pool with that command (the
//     gateway's, a reload's, the benchmarks') shares it; 233 KB each.

// snapshots are the startup snapshots kept per worker command.
var snapshots struct {
	mu    sync.Mutex
	byCmd map[string][]byte
}

func commandKey(cmd []string) string { return strings.Join(cmd, "\x00") }

// snapshotFor returns the snapshot to give a new non-checker worker of the
// pool's command, or asks the worker for one (want) when none is kept.
func (p *Pool) snapshotFor() (blob []byte, want bool) {
	if p.opts.Checker {
		return nil, false
	}
	snapshots.mu.Lock()
	defer snapshots.mu.Unlock()
	blob = snapshots.byCmd[commandKey(p.opts.Command)]
	return blob, blob == nil
}

// keepSnapshot keeps blob, from the ready frame of pr, for the pool's
// command, when pr was asked for it and none is kept already.
func (p *Pool) keepSnapshot(pr *proc, blob []byte) {
	if !pr.snapshotAsked || len(blob) == 0 {
		return
	}
	key := commandKey(p.opts.Command)
	snapshots.mu.Lock()
	defer snapshots.mu.Unlock()
	if snapshots.byCmd == nil {
		snapshots.byCmd = map[string][]byte{}
	}
	if snapshots.byCmd[key] == nil {
		snapshots.byCmd[key] = blob
	}
}

// startWarm is a worker's start-up of V8 before ready: it starts its
// isolates from the snapshot that followed init (or makes its own), puts the
// snapshot in ready when init asks for it, and prepares the first isolate.
func startWarm(init *initConfig, snapshot []byte, pool *v8sandbox.Pool, ready *message, logger *slog.Logger, st *stamps) {
	if len(snapshot) > 0 {
		err := v8sandbox.UseStartupSnapshot(snapshot)
		if err != nil {
			logger.Warn("sandbox worker: making its own V8 startup snapshot", "reason", err)
		}
		ready.SnapshotLoaded = err == nil
		st.add(phaseSnapshot, false)
	}
	if init.WantSnapshot {
		ready.Snapshot = v8sandbox.StartupSnapshot()
		st.add(phaseSnapshot, false)
	}
	pool.Warm()
	st.add(phaseWarm, false)
}
