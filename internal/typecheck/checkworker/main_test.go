package checkworker

import (
	"os"
	"testing"

	"github.com/isogate/isogate/v8sandbox/procpool"
)

// TestMain doubles the test binary as the checker worker: it links this
// package, whose server registered itself with procpool.
func TestMain(m *testing.M) {
	procpool.RunWorkerIfRequested()
	os.Exit(m.Run())
}

// workerCommand starts this test binary as a worker (see TestMain).
func workerCommand(t testing.TB) []string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return []string{exe, procpool.WorkerCommand}
}
