package procpool

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/isogate/isogate/internal/testutil"
)

// TestWorkerReachesNothing checks what a worker process inherits: an empty
// environment, / as working directory, no descriptor beyond its pipes, its
// own process group, no core dumps, no new privileges, OOM score 1000.
func TestWorkerReachesNothing(t *testing.T) {
	t.Setenv("ISOGATE_TEST_SECRET", "hunter2")
	secretFile := filepath.Join(t.TempDir(), "secret.txt")
	if err := os.WriteFile(secretFile, []byte("hunter2"), 0o600); err != nil {
		t.Fatal(err)
	}
	// A descriptor opened without close-on-exec, as a careless library would.
	leaked, err := syscall.Open(secretFile, syscall.O_RDONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Close(leaked)

	p := newTestPool(t, Options{Workers: 1})
	pid := p.Stats().Workers[0].PID
	proc := fmt.Sprintf("/proc/%d/", pid)

	env, err := os.ReadFile(proc + "environ")
	if err != nil {
		t.Fatal(err)
	}
	if len(env) != 0 {
		t.Errorf("worker environment is not empty: %q", env)
	}
	if cwd, err := os.Readlink(proc + "cwd"); err != nil || cwd != "/" {
		t.Errorf("worker cwd = %q, %v", cwd, err)
	}

	entries, err := os.ReadDir(proc + "fd")
	if err != nil {
		t.Fatal(err)
	}
	var targets []string
	for _, e := range entries {
		target, err := os.Readlink(proc + "fd/" + e.Name())
		if err != nil {
			continue // closed meanwhile
		}
		targets = append(targets, e.Name()+"→"+target)
		// Pipes (protocol, stderr), Go runtime descriptors (epoll, eventfd,
		// and the cgroup CPU quota files it reads for GOMAXPROCS), /dev/null.
		ok := strings.HasPrefix(target, "pipe:") || strings.HasPrefix(target, "anon_inode:") ||
			strings.HasPrefix(target, "/sys/fs/cgroup/") || target == "/dev/null"
		if !ok || target == secretFile {
			t.Errorf("worker fd %s → %s: not a pipe, runtime descriptor or /dev/null", e.Name(), target)
		}
	}
	t.Logf("worker descriptors: %s", strings.Join(targets, " "))
	fd1, _ := os.Readlink(proc + "fd/1")
	fd2, _ := os.Readlink(proc + "fd/2")
	if fd1 != fd2 {
		t.Errorf("worker fd 1 (%s) is not its stderr (%s): stray stdout writes could hit the protocol", fd1, fd2)
	}
	if fd0, _ := os.Readlink(proc + "fd/0"); fd0 != "/dev/null" {
		t.Errorf("worker fd 0 = %s, want /dev/null", fd0)
	}

	status, _ := os.ReadFile(proc + "status")
	if !strings.Contains(string(status), "NoNewPrivs:\t1") {
		t.Error("worker lacks no_new_privs")
	}
	if adj, _ := os.ReadFile(proc + "oom_score_adj"); strings.TrimSpace(string(adj)) != "1000" {
		t.Errorf("worker oom_score_adj = %q", adj)
	}
	limits, _ := os.ReadFile(proc + "limits")
	for _, line := range strings.Split(string(limits), "\n") {
		if strings.HasPrefix(line, "Max core file size") && !strings.Contains(line, " 0 ") {
			t.Errorf("core dumps enabled: %q", line)
		}
	}
	if pgid, _ := syscall.Getpgid(pid); pgid == syscall.Getpgrp() {
		t.Error("worker shares the parent's process group: a terminal ^C would reach it")
	}
}

// TestWorkersDieWithTheirParent kills a pool's process with SIGKILL (no
// chance to clean up) and checks that its workers die too. It also checks
// that a worker's crash dump never reaches the parent's stdout.
func TestWorkersDieWithTheirParent(t *testing.T) {
	exe, _ := os.Executable()
	cmd := exec.Command(exe, "pool-parent")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr := &testutil.Buffer{}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	lines := make(chan string, 1)
	go func() {
		line, _ := bufio.NewReader(stdout).ReadString('\n')
		lines <- line
	}()
	var line string
	select {
	case line = <-lines:
	case <-time.After(30 * time.Second):
		t.Fatalf("pool-parent said nothing; stderr:\n%s", stderr.String())
	}
	var rep parentReport
	if err := json.Unmarshal([]byte(line), &rep); err != nil {
		t.Fatalf("pool-parent stdout is not its report: %q (%v)", line, err)
	}
	if rep.Code != "HEAP_LIMIT" || len(rep.PIDs) != 2 {
		t.Fatalf("report = %+v; stderr:\n%s", rep, stderr.String())
	}
	if !strings.Contains(stderr.String(), "invalid size error") {
		t.Errorf("the worker's crash dump did not reach the parent's log")
	}

	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	// Nothing else was written to the parent's stdout, and no worker holds
	// it open (EOF came with the parent's death).
	rest, _ := io.ReadAll(stdout)
	if len(rest) != 0 {
		t.Errorf("parent stdout got %q", rest)
	}
	for _, pid := range rep.PIDs {
		// Not our child: no wait to block on, only /proc to look at.
		testutil.Eventually(t, 5*time.Second, func() bool { return !alive(pid) }, "worker %d to die with its parent", pid)
	}
}

// alive reports whether pid exists and is not a zombie.
func alive(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	s := string(b)
	if i := strings.LastIndexByte(s, ')'); i >= 0 && i+2 < len(s) {
		return s[i+2] != 'Z'
	}
	return true
}
