//go:build !linux

package procpool

const (
	workerID     = 65534
	workerNoFile = 64
	// workerMaxThreads: see confine_linux.go.
	workerMaxThreads = 256
)

// Other systems get no confinement beyond the basic hardening.
func confineWorker(bool) *workerFacts { return nil }

func isWorker() bool { return false }
