//go:build linux

package procpool

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
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
