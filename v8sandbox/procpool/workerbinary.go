package procpool

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"github.com/isogate/isogate/v8sandbox"
)

// The dedicated worker binary.
//
// By default a worker is this very binary started again (`isogate
// sandbox-worker`): every worker start initialises the gateway's whole
// package graph (~550 packages) and touches its pages. cmd/isogate-worker
// is the same worker (this package: confinement, seccomp, protocol) in a
// binary of ~150 packages. A pool whose Command is not set starts its
// workers from WorkerBinary when that file is next to the executable (make
// build puts it there), and from this binary otherwise, logging why.
//
//   - The dedicated binary must start its isolates from the same scripts
//     as this one: its init carries this binary's v8sandbox.StartupKey,
//     and a worker whose own key differs refuses to serve.
//   - If the pool's first workers cannot start from it (a stale build: its
//     protocol or its scripts differ; not executable), the pool logs why
//     and starts them from this binary instead.
//   - Once it failed so (a handshake timeout costs workerStartTimeout),
//     every later pool of this process starts from this binary at once
//     rather than waiting for it again: the gateway builds two pools (runs
//     and run_code), and a hanging binary cost each its timeout.
//   - The type checker keeps this binary: its compiler's code cache is
//     keyed to it.

// WorkerBinary is the file name of the dedicated sandbox worker binary,
// looked for next to the executable.
const WorkerBinary = "isogate-worker"

// dedicatedWorker returns the command that starts the dedicated worker
// binary in dir (next to the executable when dir is ""), or the reason
// there is none.
func dedicatedWorker(dir string) ([]string, error) {
	if dir == "" {
		if inTestBinary() {
			return nil, errors.New("a test binary serves as its own worker")
		}
		exe, err := os.Executable()
		if err != nil {
			return nil, fmt.Errorf("locating the executable: %w", err)
		}
		dir = filepath.Dir(exe)
	}
	path := filepath.Join(dir, WorkerBinary)
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() || fi.Mode().Perm()&0o111 == 0 {
		return nil, fmt.Errorf("%s is not an executable file", path)
	}
	return []string{path, WorkerCommand}, nil
}

// checkStartupKey refuses a worker whose startup scripts differ from its
// parent's (key, from init; empty when the parent does not check).
func checkStartupKey(key []byte) error {
	if len(key) == 0 || bytes.Equal(key, v8sandbox.StartupKey()) {
		return nil
	}
	return errors.New("this worker binary's V8 startup scripts differ from its parent's: a build of another version")
}

// failedDedicated holds, by path, why a dedicated worker binary did not
// start in this process (error values).
var failedDedicated sync.Map

// rememberFailure records that the dedicated worker binary at path did not
// start, so later pools do not try it again.
func rememberFailure(path string, err error) {
	failedDedicated.Store(path, err)
}

// failedBefore returns why the dedicated worker binary at path did not
// start in an earlier pool of this process, or nil.
func failedBefore(path string) error {
	if v, ok := failedDedicated.Load(path); ok {
		return fmt.Errorf("it did not start for an earlier pool of this process: %w", v.(error))
	}
	return nil
}
