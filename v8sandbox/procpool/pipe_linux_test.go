package procpool

import (
	"os"
	"testing"

	"golang.org/x/sys/unix"
)

func pipeSize(t *testing.T, f *os.File) int {
	t.Helper()
	rc, err := f.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	n := -1
	if err := rc.Control(func(fd uintptr) { n, err = unix.FcntlInt(fd, unix.F_GETPIPE_SZ, 0) }); err != nil {
		t.Fatal(err)
	}
	return n
}

// The init frame and the V8 snapshot after it go into a worker's stdin in
// one write that needs no reader (its pipe holds them), and the pipe is
// back to its usual size once the worker has read them (it answered ready).
func TestInitAndSnapshotFitTheWorkersPipe(t *testing.T) {
	if ifPidsCgroup("yes") == nil {
		t.Skip("the check runs in the pids cgroup hook; this host delegates no pids cgroup to the test")
	}
	cmd := workerCommand(t)
	newTestPool(t, Options{Workers: 1, SlotsPerWorker: 1, Command: cmd, noNamespaces: true}).Close() // makes the snapshot
	snapshot, _ := (&Pool{opts: Options{Command: cmd}}).snapshotFor()
	if len(snapshot) <= pipeBytes {
		t.Fatalf("snapshot of %d bytes: nothing to fit", len(snapshot))
	}
	during := make(chan int, 1)
	var pr *proc
	newTestPool(t, Options{Workers: 1, SlotsPerWorker: 1, Command: cmd, noNamespaces: true, beforeCgroup: func(w *proc) {
		<-w.readyCh // the handshake waits for this hook before it shrinks the pipe
		pr = w
		during <- pipeSize(t, w.stdin)
	}})
	if n := <-during; n < len(snapshot) {
		t.Errorf("the worker's stdin held %d bytes while it started, less than the %d-byte snapshot", n, len(snapshot))
	}
	if n := pipeSize(t, pr.stdin); n != pipeBytes {
		t.Errorf("the worker's stdin holds %d bytes once it is ready, want %d", n, pipeBytes)
	}
}
