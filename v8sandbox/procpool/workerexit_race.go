//go:build race

package procpool

import "syscall"

// exitWorker ends a worker process with code. Under the race detector
// (this binary, and so its workers, built with -race) it exits at once:
// os.Exit would sleep a second first (the race runtime's atexit_sleep_ms),
// and every pool Close waits for its workers to exit. GORACE cannot lower
// it here: a worker's environment is empty, and one started with
// GORACE=atexit_sleep_ms=0 still slept (the race runtime reads
// /proc/self/environ, which the worker's Landlock ruleset has closed). A
// race in a worker is still printed to its stderr when it happens; only
// the exit code 66 that would follow a clean exit is lost, which the pool
// does not read.
func exitWorker(code int) { syscall.Exit(code) }
