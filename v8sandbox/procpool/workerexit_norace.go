//go:build !race

package procpool

import "os"

// exitWorker ends a worker process with code (see workerexit_race.go for
// race-detector builds).
func exitWorker(code int) { os.Exit(code) }
