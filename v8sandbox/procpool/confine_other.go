//go:build !linux

package procpool

import "time"

const (
	workerID     = 65534
	workerNoFile = 64
	// workerMaxThreads: see confine_linux.go.
	workerMaxThreads = 256
)

// Other systems get no confinement beyond the basic hardening.
func confineWorker(bool) *workerFacts { return nil }

func isWorker() bool { return false }

func monoNow() int64 { return time.Since(processStart).Nanoseconds() }

func cpuNow() int64 { return -1 }

func earlyStamps() []stamp { return nil }

var processStart = time.Now()
