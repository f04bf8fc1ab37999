//go:build linux

package procpool

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/isogate/isogate/v8sandbox"
)

// TestWorkerPidsCgroup checks, where this host delegates a pids cgroup,
// that a worker spawned without a user namespace of its own (so without
// RLIMIT_NPROC) sits in a cgroup of its own whose pids.max is the thread
// bound, that the threads layer reports it, and that the cgroup is removed
// once the worker is reaped. (The escape drill's thread bomb proves that
// the bound stops a worker.)
func TestWorkerPidsCgroup(t *testing.T) {
	if ifPidsCgroup("yes") == nil {
		t.Skip("this host delegates no pids cgroup to the test")
	}
	p := newTestPool(t, Options{Workers: 1, SlotsPerWorker: 1, noNamespaces: true})
	var pr *proc
	waitState(t, p, workerStartTimeout, "the worker serving", func() bool {
		p.mu.Lock()
		defer p.mu.Unlock()
		pr = p.slots[0].cur
		return pr != nil
	})
	if pr.cgroup == "" {
		t.Fatalf("the worker has no pids cgroup: %s", pr.cgroupWhy)
	}
	max, err := os.ReadFile(filepath.Join(pr.cgroup, "pids.max"))
	if err != nil || strings.TrimSpace(string(max)) != strconv.Itoa(workerMaxThreads) {
		t.Fatalf("pids.max = %q, %v; want %d", max, err, workerMaxThreads)
	}
	own, _ := os.ReadFile("/proc/" + strconv.Itoa(pr.pid) + "/cgroup")
	if !strings.Contains(string(own), "/"+filepath.Base(pr.cgroup)+"\n") {
		t.Fatalf("the worker's cgroups are %q, not %s", own, pr.cgroup)
	}
	if c := p.Confinement(); c.Level(LayerThreads) != LevelOn {
		t.Fatalf("threads layer %q, want on: %+v", c.Level(LayerThreads), c.Layers)
	}
	p.Close()
	if _, err := os.Stat(pr.cgroup); !os.IsNotExist(err) {
		t.Fatalf("the reaped worker's cgroup %s is left behind (%v)", pr.cgroup, err)
	}
}

// A worker starts up while the parent joins it to its pids cgroup (a
// cgroup move waits for the kernel: milliseconds on cgroup v1), and is
// given no run before it is in it: here the move is held until the worker
// has answered ready, and New returns a pool whose worker is in its cgroup.
func TestWorkerStartsWhileItJoinsItsCgroup(t *testing.T) {
	if ifPidsCgroup("yes") == nil {
		t.Skip("this host delegates no pids cgroup to the test")
	}
	readyFirst := make(chan bool, 1)
	p := newTestPool(t, Options{Workers: 1, SlotsPerWorker: 1, noNamespaces: true, beforeCgroup: func(pr *proc) {
		select {
		case <-pr.readyCh:
			readyFirst <- true
		case <-time.After(workerStartTimeout):
			readyFirst <- false // it waits for the cgroup: it never comes
		}
	}})
	if !<-readyFirst {
		t.Fatal("the worker did not start up while the parent held its cgroup move")
	}
	var pr *proc
	waitState(t, p, workerStartTimeout, "the worker serving", func() bool {
		p.mu.Lock()
		defer p.mu.Unlock()
		pr = p.slots[0].cur
		return pr != nil
	})
	own, _ := os.ReadFile("/proc/" + strconv.Itoa(pr.pid) + "/cgroup")
	if pr.cgroup == "" || !strings.Contains(string(own), "/"+filepath.Base(pr.cgroup)+"\n") {
		t.Fatalf("New returned a worker outside its pids cgroup %q (%s): its cgroups are %q", pr.cgroup, pr.cgroupWhy, own)
	}
	if res, err := p.Run(context.Background(), v8sandbox.Job{Source: "1 + 1", AwaitResult: true}, nil); err != nil || string(res.Value) != "2" {
		t.Fatalf("run: %s %v", res.Value, err)
	}
}
