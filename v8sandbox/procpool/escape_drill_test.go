package procpool

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/isogate/isogate/v8sandbox"
)

// builtIsogates are the cmd/isogate binaries buildIsogate made, by build
// tags, in one directory TestMain removes: TestEscapeDrill and
// TestCheckerEscapeDrill share one build (each link of cmd/isogate took
// seconds of the package's test time).
var builtIsogates struct {
	sync.Mutex
	dir  string
	bins map[string]string
}

// buildIsogate builds cmd/isogate with the given build tags, once per tags
// in the test binary's life.
func buildIsogate(t *testing.T, tags string) string {
	t.Helper()
	builtIsogates.Lock()
	defer builtIsogates.Unlock()
	if bin, ok := builtIsogates.bins[tags]; ok {
		return bin
	}
	if builtIsogates.dir == "" {
		dir, err := os.MkdirTemp("", "procpool-isogate")
		if err != nil {
			t.Fatal(err)
		}
		builtIsogates.dir, builtIsogates.bins = dir, map[string]string{}
	}
	bin := filepath.Join(builtIsogates.dir, fmt.Sprintf("isogate-%d", len(builtIsogates.bins)))
	build := exec.Command("go", "build", "-tags", tags, "-o", bin, "github.com/isogate/isogate/cmd/isogate")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building isogate (tags %q): %v\n%s", tags, err, out)
	}
	// A root gateway's workers run as uid 65534 on the host only if that
	// uid can execute the binary (else they are mapped to root; see
	// nsLevels): open the test's directories, as an installed binary's are.
	for dir := filepath.Dir(bin); dir != os.TempDir() && dir != "/"; dir = filepath.Dir(dir) {
		if err := os.Chmod(dir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	builtIsogates.bins[tags] = bin
	return bin
}

// removeBuiltIsogates removes what buildIsogate built (TestMain, at the end).
func removeBuiltIsogates() {
	if builtIsogates.dir != "" {
		os.RemoveAll(builtIsogates.dir)
	}
}

// drillConfig is one confinement the drill runs under.
type drillConfig struct {
	name string
	opts Options
	// mustDeny are actions this configuration must stop on its own: proof
	// that the layer works, not only the sum.
	mustDeny []string
	// credits, when set, are the only actions the table of layers credits
	// to this configuration (one that keeps another layer on).
	credits []string
}

// TestEscapeDrill makes a live worker, built with the escapedrill tag,
// execute an attacker's actions natively with its real credentials, as an
// exploit of V8 would, and checks that every one is denied under full
// (strict) confinement. Then it runs the drill under each layer alone and
// reports which layers stop which action.
func TestEscapeDrill(t *testing.T) {
	if testing.Short() {
		t.Skip("builds cmd/isogate with the escapedrill tag")
	}
	bin := buildIsogate(t, "escapedrill")
	targets, accepted := drillTargets(t)

	none := layerSet{}
	only := func(l layerSet) *layerSet { return &l }
	signals := []string{"tgkill the gateway", "tgkill a sibling worker", "tkill the gateway", "rt_tgsigqueueinfo the gateway", "rt_sigqueueinfo the gateway"}
	oracles := []string{"openat tells whether a file exists", "openat O_PATH tells whether a file exists"}
	configs := []drillConfig{
		{name: "all layers (strict)", opts: Options{Confinement: ConfinementStrict}},
		{name: "namespaces only", opts: Options{layers: &none},
			mustDeny: append([]string{"connect to a loopback TCP listener", "signal the gateway", "ptrace the gateway", "process_vm_readv the gateway"}, signals...)},
		{name: "landlock only", opts: Options{layers: only(layerSet{landlock: true}), noNamespaces: true},
			mustDeny: append([]string{"read the gateway's config file", "read /etc/passwd", "read /proc/<gateway>/environ", "read /proc/<backend>/environ", "create a file", "execve /bin/sh", "signal the gateway", "ptrace the gateway"}, signals...)},
		{name: "seccomp only", opts: Options{layers: only(layerSet{seccomp: true}), noNamespaces: true},
			mustDeny: append(append([]string{"read the gateway's config file", "read /etc/passwd", "create a file", "connect to a loopback TCP listener", "execve /bin/sh", "fork",
				"ptrace the gateway", "signal the gateway", "process_vm_readv the gateway", "mount", "unshare a network namespace", "bpf", "io_uring_setup", "userfaultfd", "perf_event_open", "setuid 0"},
				signals...), oracles...)},
		{name: "capabilities only", opts: Options{layers: only(layerSet{caps: true}), noNamespaces: true},
			mustDeny: []string{"read the gateway's config file", "mount", "unshare a network namespace", "setuid 0"}},
		// The thread bound needs the worker's own user namespace (see
		// threadBound), so the namespaces stay; "namespaces only" shows
		// that they alone do not stop the bomb.
		{name: "threads only", opts: Options{layers: only(layerSet{threads: true})},
			mustDeny: []string{"create 3000 threads"}, credits: []string{"create 3000 threads"}},
		// A host without user or pid namespaces and without Landlock (a
		// non-root gateway in Docker, Ubuntu's user-namespace restriction,
		// a kernel before 5.13): seccomp, capabilities and rlimits still
		// stop every signal and every existence oracle. RLIMIT_NPROC does
		// not bind there; the pids cgroup, where the host delegates one,
		// stops the thread bomb (else the layer is logged as unavailable).
		{name: "no namespaces, no Landlock", opts: Options{layers: only(layerSet{seccomp: true, caps: true, rlimits: true, threads: true}), noNamespaces: true},
			mustDeny: append(append(append([]string{"read the gateway's config file", "read /etc/passwd", "read /proc/<gateway>/environ", "create a file", "connect to a loopback TCP listener",
				"execve /bin/sh", "fork", "ptrace the gateway", "ptrace a sibling worker", "signal the gateway", "signal a sibling worker", "process_vm_readv the gateway"},
				signals...), oracles...), ifPidsCgroup("create 3000 threads")...)},
	}
	stoppedBy := map[string][]string{}
	var order []string
	for i, c := range configs {
		outcomes, conf := runDrill(t, bin, c.opts, targets)
		if outcomes == nil {
			continue // skipped
		}
		t.Logf("%s: %s", c.name, conf)
		if n := accepted.Load(); i == 0 && n != 0 {
			t.Errorf("ESCAPE under full confinement: the listener accepted %d connections from the worker", n)
		}
		for _, o := range outcomes {
			if i == 0 {
				order = append(order, o.Action)
				if !o.Denied {
					t.Errorf("ESCAPE under full confinement: %q was allowed", o.Action)
				}
				continue
			}
			if layer, alone := strings.CutSuffix(c.name, " only"); alone && o.Denied && (c.credits == nil || slices.Contains(c.credits, o.Action)) {
				stoppedBy[o.Action] = append(stoppedBy[o.Action], layer+" ("+o.Errno+")")
			}
		}
		if _, alone := strings.CutSuffix(c.name, " only"); !alone && i > 0 {
			var allowed []string
			for _, o := range outcomes {
				if !o.Denied {
					allowed = append(allowed, o.Action)
				}
			}
			t.Logf("%s: allowed %q", c.name, allowed)
		}
		for _, want := range c.mustDeny {
			for _, o := range outcomes {
				if o.Action == want && !o.Denied {
					t.Errorf("%s: %q was allowed; this layer alone should stop it", c.name, want)
				}
			}
		}
	}
	var table strings.Builder
	for _, a := range order {
		by := stoppedBy[a]
		sort.Strings(by)
		fmt.Fprintf(&table, "  %-42s %s\n", a, strings.Join(by, ", "))
	}
	t.Logf("which layer alone stops each action:\n%s", table.String())
}

// drillTargets sets up the drill's targets: a config file with a secret,
// a backend with a secret in its environment, a loopback listener (whose
// accepted connections it counts), a directory to mount on, a file to
// create.
func drillTargets(t *testing.T) (drillSpec, *atomic.Int64) {
	t.Helper()
	dir := t.TempDir()
	config := filepath.Join(dir, "isogate.yaml")
	if err := os.WriteFile(config, []byte("token: hunter2\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	exe, _ := os.Executable()
	backend := exec.Command(exe, "secret-holder")
	backend.Env = []string{"ISOGATE_BACKEND_SECRET=hunter2"}
	if err := backend.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { backend.Process.Kill(); backend.Wait() })
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	accepted := &atomic.Int64{}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepted.Add(1)
			c.Close()
		}
	}()
	mountDir := filepath.Join(dir, "mnt")
	if err := os.Mkdir(mountDir, 0o777); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = unix.Unmount(mountDir, unix.MNT_DETACH) })
	// /tmp is world-writable: only the confinement can stop this one.
	created := filepath.Join(os.TempDir(), fmt.Sprintf("isogate-drill-%d", os.Getpid()))
	t.Cleanup(func() { os.Remove(created) })
	return drillSpec{
		GatewayPID: os.Getpid(), BackendPID: backend.Process.Pid, ConfigFile: config, CreateFile: created, MountDir: mountDir,
		Port: ln.Addr().(*net.TCPAddr).Port,
	}, accepted
}

// runDrill starts a pool of two drill workers under opts and runs the drill
// on the first, whose sibling is the second. It returns nil when the host
// lacks what strict confinement needs (the test is skipped then).
func runDrill(t *testing.T, bin string, opts Options, spec drillSpec) ([]drillOutcome, Confinement) {
	t.Helper()
	opts.Command = []string{bin, WorkerCommand}
	opts.Workers, opts.SlotsPerWorker = 2, 1
	opts.Logger = quietLogger(t)
	p, err := New(opts)
	if err != nil {
		if opts.Confinement == ConfinementStrict && strings.Contains(err.Error(), "strict sandbox confinement") {
			if lacks := hostLacks(); lacks != "" {
				t.Skipf("this host cannot confine workers fully (%s): %v", lacks, err)
			}
			t.Fatalf("this host has user namespaces, Landlock and seccomp, yet: %v", err)
		}
		t.Fatal(err)
	}
	defer p.Close()
	// The first worker takes the drill (the least busy, in slot order);
	// the second is its sibling.
	serving := func() bool {
		p.mu.Lock()
		defer p.mu.Unlock()
		if p.slots[0].cur == nil || p.slots[1].cur == nil {
			return false
		}
		spec.SiblingPID = p.slots[1].cur.pid
		return true
	}
	waitState(t, p, workerStartTimeout, "both workers serving", serving)
	spec.Skip = []string{execAction}
	out := drill(t, p, spec)
	spec.Skip = nil
	// A successful execve replaces the worker: drilled alone, on the
	// it shows as the worker's death.
	spec.Only = []string{execAction}
	waitState(t, p, workerStartTimeout, "both workers serving", serving)
	out = append(out, drill(t, p, spec)...)
	return out, p.Confinement()
}

// execAction is the drill's execve action.
const execAction = "execve /bin/sh"

func drill(t *testing.T, p *Pool, spec drillSpec) []drillOutcome {
	t.Helper()
	b, _ := json.Marshal(spec)
	res, err := p.Run(context.Background(), v8sandbox.Job{Source: drillPrefix + string(b)}, nil)
	if len(spec.Only) == 1 && spec.Only[0] == execAction && v8sandbox.CodeOf(err) == v8sandbox.CodeSandboxCrashed {
		// /bin/sh ran in the worker's place and exited.
		return []drillOutcome{{Action: execAction, Denied: false}}
	}
	if err != nil {
		t.Fatalf("drill run: %v", err)
	}
	var out []drillOutcome
	if err := json.Unmarshal(res.Value, &out); err != nil {
		t.Fatalf("drill report %s: %v", res.Value, err)
	}
	return out
}

// ifPidsCgroup returns actions when this host lets the test's process
// create a child in its pids cgroup (checked independently of the code
// under test: v1's pids hierarchy, or v2 with pids delegated), else none.
func ifPidsCgroup(actions ...string) []string {
	cg, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return nil
	}
	for _, line := range strings.Split(string(cg), "\n") {
		parts := strings.SplitN(line, ":", 3)
		var dir string
		switch {
		case len(parts) != 3:
			continue
		case slices.Contains(strings.Split(parts[1], ","), "pids"):
			dir = filepath.Join("/sys/fs/cgroup/pids", parts[2])
		case parts[0] == "0" && parts[1] == "":
			dir = filepath.Join("/sys/fs/cgroup", parts[2])
			if sub, _ := os.ReadFile(filepath.Join(dir, "cgroup.subtree_control")); !slices.Contains(strings.Fields(string(sub)), "pids") {
				continue
			}
		default:
			continue
		}
		probe := filepath.Join(dir, fmt.Sprintf("isogate-test-%d", os.Getpid()))
		if os.Mkdir(probe, 0o755) == nil {
			syscall.Rmdir(probe)
			return actions
		}
	}
	return nil
}

// hostLacks probes, independently of the code under test, for the kernel
// features strict confinement needs; it names the missing ones.
func hostLacks() string {
	var lacks []string
	if abi, _, errno := syscall.Syscall(444 /* landlock_create_ruleset */, 0, 0, 1 /* VERSION */); errno != 0 || abi < 1 {
		lacks = append(lacks, "no Landlock")
	}
	if _, err := unix.PrctlRetInt(unix.PR_GET_SECCOMP, 0, 0, 0, 0); err != nil {
		lacks = append(lacks, "no seccomp")
	}
	probe := exec.Command("/bin/true")
	probe.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWUSER | syscall.CLONE_NEWNET | syscall.CLONE_NEWNS | syscall.CLONE_NEWPID | syscall.CLONE_NEWIPC,
		UidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Geteuid(), Size: 1}},
		GidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getegid(), Size: 1}}}
	if err := probe.Run(); err != nil {
		lacks = append(lacks, "no user namespaces: "+err.Error())
	}
	return strings.Join(lacks, ", ")
}
