//go:build race

package procpool

import "syscall"

// exitWorker ends a worker process with code. Under the race detector
// (this binary, and so its workers, built with -race) it exits at once:
// os.Exit would sleep a second first (the race runtime's atexit_sleep_ms,
// which GORACE cannot lower in a worker: the runtime reads it from
// /proc/self/environ, which Landlock has closed by then), and every pool
// Close waits for its workers to exit. A race in a worker is still printed
// to its stderr when it happens; only the exit code 66 that would follow a
// clean exit is lost, which the pool does not read.
func exitWorker(code int) { syscall.Exit(code) }
