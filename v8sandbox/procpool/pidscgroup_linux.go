package procpool

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"
)

// A pids cgroup per worker: the thread and process bound that holds
// whatever namespaces the worker got. RLIMIT_NPROC (confine_linux.c) binds
// only a worker in a user namespace of its own mapped to a uid other than
// the host's root (see threadBound); a pids cgroup binds any worker,
// counting exactly its own tasks, threads included.
//
// At pool start the pool looks for the pids controller of its own process:
// a cgroup v1 pids hierarchy, or cgroup v2 where the gateway's cgroup
// already has pids in its cgroup.subtree_control (a delegated sub-tree, or
// the root). It creates a probe child there and removes it; if any step
// fails the layer falls back to RLIMIT_NPROC alone, with the reason in the
// threads layer's detail. The pool never moves the gateway itself (v2's
// "no internal processes" rule would require a leaf for it): on v2 without
// pids enabled below the gateway's cgroup, the bound is RLIMIT_NPROC.
//
// Each worker gets the child isogate-<gateway pid>-w<n> with pids.max set
// to workerMaxThreads; its pid is written into cgroup.procs right after
// the spawn, while the worker starts up (it runs only its own start-up
// code until then), and the handshake waits for it, so the worker is in
// its cgroup before it is given any run. The child is removed once the
// worker is reaped.

// pidsCgroups is where a pool creates its workers' cgroups.
type pidsCgroups struct {
	dir string // the pids directory of the gateway's cgroup; "" if none
	why string // why there is none
}

var cgroupSeq atomic.Uint64

// probePidsCgroups finds a writable pids cgroup directory of this process
// and checks that a child with pids.max can be created in it.
func probePidsCgroups() pidsCgroups {
	dir, err := ownPidsDir()
	if err != nil {
		return pidsCgroups{why: err.Error()}
	}
	removeStaleCgroups(dir)
	probe := filepath.Join(dir, fmt.Sprintf("isogate-%d-probe%d", os.Getpid(), cgroupSeq.Add(1)))
	if err := makePidsCgroup(probe); err != nil {
		return pidsCgroups{why: err.Error()}
	}
	if err := removeCgroup(probe); err != nil {
		return pidsCgroups{why: err.Error()}
	}
	return pidsCgroups{dir: dir}
}

// place creates a cgroup bounded to workerMaxThreads tasks and moves pid
// into it; it returns the cgroup's directory.
func (c pidsCgroups) place(pid int) (string, error) {
	if c.dir == "" {
		return "", errors.New(c.why)
	}
	cg := filepath.Join(c.dir, fmt.Sprintf("isogate-%d-w%d", os.Getpid(), cgroupSeq.Add(1)))
	if err := makePidsCgroup(cg); err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(cg, "cgroup.procs"), []byte(strconv.Itoa(pid)), 0); err != nil {
		_ = removeCgroup(cg)
		return "", fmt.Errorf("moving worker %d into %s: %w", pid, cg, err)
	}
	return cg, nil
}

// makePidsCgroup creates the cgroup dir with pids.max workerMaxThreads.
func makePidsCgroup(dir string) error {
	if err := os.Mkdir(dir, 0o755); err != nil {
		return fmt.Errorf("creating a pids cgroup: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "pids.max"), []byte(strconv.Itoa(workerMaxThreads)), 0); err != nil {
		_ = removeCgroup(dir)
		return fmt.Errorf("setting pids.max in %s: %w", dir, err)
	}
	return nil
}

// removeCgroup removes an empty cgroup. A reaped worker's tasks may take a
// moment to leave it (the kernel frees exiting threads asynchronously), so
// EBUSY is retried a bounded number of times.
func removeCgroup(dir string) error {
	var err error
	for i := range 50 {
		if err = syscall.Rmdir(dir); err == nil || !errors.Is(err, syscall.EBUSY) {
			break
		}
		time.Sleep(time.Duration(i+1) * time.Millisecond) // at most ~1.3 s in all
	}
	if err != nil {
		return fmt.Errorf("removing cgroup %s: %w", dir, err)
	}
	return nil
}

// removeStaleCgroups removes the empty worker cgroups that gateways no
// longer running left behind (killed before they could clean up).
func removeStaleCgroups(dir string) {
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		rest, ok := strings.CutPrefix(e.Name(), "isogate-")
		if !ok || !e.IsDir() {
			continue
		}
		pidText, _, _ := strings.Cut(rest, "-")
		pid, err := strconv.Atoi(pidText)
		if err != nil || pid == os.Getpid() {
			continue
		}
		if syscall.Kill(pid, 0) == syscall.ESRCH {
			_ = syscall.Rmdir(filepath.Join(dir, e.Name())) // fails while not empty
		}
	}
}

// ownPidsDir returns the directory of this process's cgroup in a pids
// hierarchy where it may create children with pids.max.
func ownPidsDir() (string, error) {
	cg, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return "", fmt.Errorf("no cgroups: %w", err)
	}
	mounts, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return "", fmt.Errorf("no mount table: %w", err)
	}
	var v2Path string
	for _, line := range strings.Split(string(cg), "\n") {
		parts := strings.SplitN(line, ":", 3)
		if len(parts) != 3 {
			continue
		}
		if parts[0] == "0" && parts[1] == "" {
			v2Path = parts[2]
			continue
		}
		for _, ctl := range strings.Split(parts[1], ",") {
			if ctl == "pids" {
				mnt, root, ok := cgroupMount(string(mounts), "cgroup", "pids")
				if !ok {
					return "", errors.New("the cgroup v1 pids hierarchy is not mounted")
				}
				return filepath.Join(mnt, relativeTo(parts[2], root)), nil
			}
		}
	}
	if v2Path == "" {
		return "", errors.New("no pids controller in this process's cgroups")
	}
	mnt, root, ok := cgroupMount(string(mounts), "cgroup2", "")
	if !ok {
		return "", errors.New("cgroup v2 is not mounted")
	}
	dir := filepath.Join(mnt, relativeTo(v2Path, root))
	sub, err := os.ReadFile(filepath.Join(dir, "cgroup.subtree_control"))
	if err != nil {
		return "", fmt.Errorf("cgroup v2: %w", err)
	}
	if !slicesContainsField(string(sub), "pids") {
		return "", fmt.Errorf("cgroup v2: pids is not enabled in %s/cgroup.subtree_control (not delegated)", dir)
	}
	return dir, nil
}

// cgroupMount finds the mount point and root of a cgroup file system of
// type fstype whose super options include opt (any when "").
func cgroupMount(mountinfo, fstype, opt string) (mnt, root string, ok bool) {
	for _, line := range strings.Split(mountinfo, "\n") {
		pre, post, found := strings.Cut(line, " - ")
		if !found {
			continue
		}
		f, p := strings.Fields(pre), strings.Fields(post)
		if len(f) < 5 || len(p) < 3 || p[0] != fstype {
			continue
		}
		if opt != "" && !slicesContainsField(strings.ReplaceAll(p[2], ",", " "), opt) {
			continue
		}
		return f[4], f[3], true
	}
	return "", "", false
}

// relativeTo returns path relative to a mount's root (a cgroup namespace or
// a bind mount shows a sub-tree).
func relativeTo(path, root string) string {
	if root == "/" {
		return path
	}
	if rest, ok := strings.CutPrefix(path, root); ok {
		return "/" + strings.TrimPrefix(rest, "/")
	}
	return path
}

func slicesContainsField(s, word string) bool {
	for _, f := range strings.Fields(s) {
		if f == word {
			return true
		}
	}
	return false
}
