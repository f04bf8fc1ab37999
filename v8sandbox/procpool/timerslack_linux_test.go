package procpool

import (
	"context"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/isogate/isogate/v8sandbox"
)

// timerSlack reads a thread's timer slack (ns) from /proc/TID (the file is
// not under /proc/PID/task/TID).
func timerSlack(t *testing.T, tid int) int64 {
	t.Helper()
	path := "/proc/" + strconv.Itoa(tid) + "/timerslack_ns"
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	ns, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return ns
}

// Every thread of a worker, the Go runtime's sysmon among them, runs with
// workerTimerSlack from the start (inherited from the spawner's thread
// across fork and exec), after a run has made the worker start its V8
// threads too; the thread that asked for the pool keeps its own.
func TestWorkersRunWithTheirTimerSlack(t *testing.T) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	own := timerSlack(t, unix.Gettid())
	p := newTestPool(t, Options{Workers: 1, SlotsPerWorker: 1})
	res, err := p.Run(context.Background(), v8sandbox.Job{Source: `[1, 2].map(x => x * 21).at(-1)`, AwaitResult: true, Principal: "p"}, nil)
	if err != nil || string(res.Value) != "42" {
		t.Fatalf("run: %s %v", res.Value, err)
	}
	p.mu.Lock()
	pid := p.slots[0].cur.pid
	p.mu.Unlock()
	tasks, err := os.ReadDir("/proc/" + strconv.Itoa(pid) + "/task")
	if err != nil || len(tasks) < 3 {
		t.Fatalf("worker %d threads: %v %v", pid, tasks, err)
	}
	for _, task := range tasks {
		tid, _ := strconv.Atoi(task.Name())
		if ns := timerSlack(t, tid); ns != workerTimerSlack.Nanoseconds() {
			t.Errorf("worker %d thread %d: %d ns of slack, want %d", pid, tid, ns, workerTimerSlack.Nanoseconds())
		}
	}
	if now := timerSlack(t, unix.Gettid()); now != own || own == workerTimerSlack.Nanoseconds() {
		t.Errorf("the caller's thread has %d ns of slack, it had %d", now, own)
	}
}
