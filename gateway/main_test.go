package gateway

import (
	"os"
	"testing"

	"github.com/isogate/isogate/v8sandbox/procpool"
)

// TestMain lets this test binary serve as the sandbox worker of process
// isolation.
func TestMain(m *testing.M) {
	procpool.RunWorkerIfRequested()
	os.Exit(m.Run())
}
