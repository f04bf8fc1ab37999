// Package conformance runs the official MCP conformance suite's server
// scenarios (npm @modelcontextprotocol/conformance, pinned with a Node 22 in
// package-lock.json and installed by `make deps`) against the go-sdk's
// conformance everything-server twice per protocol era: directly over
// streamable HTTP, and behind `isogate serve --http` (server.expose:
// passthrough, the everything-server as a stdio backend). A scenario that
// passes directly must pass through isogate too, unless expected-failures.txt
// lists it; a listed scenario that passes through isogate must leave the
// list. The list can only shrink.
package conformance

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/isogate/isogate/config"
	"github.com/isogate/isogate/internal/testutil"
	"github.com/isogate/isogate/internal/textcut"
)

// toolNames is the value the harness gives `server.tool_names` in the
// gateway's configuration ("bare" serves the backend's tools under their own
// names, which is what the suite calls). "" leaves the key out: isogate then
// serves them as `<backend>__<tool>` and every scenario that calls a tool or
// gets a prompt by name fails through it (see expected-failures.txt).
const toolNames = "auto"

// eras are the protocol versions the suite is run at, each against both
// server modes: with sessions and stateless. The go-sdk server passes every
// scenario of an era in the mode the version is specified for (2025-11-25
// with sessions, 2026-07-28 stateless) and fails some in the other; the
// ratchet compares like with like (what passes directly must pass through
// isogate in the same mode).
var eras = []era{
	{version: "2025-11-25", stateless: false},
	{version: "2025-11-25", stateless: true},
	{version: "2026-07-28", stateless: true},
	{version: "2026-07-28", stateless: false},
}

type era struct {
	version   string
	stateless bool
}

// label names an era and mode in expected-failures.txt and the report:
// "2025-11-25/sessions", "2026-07-28/stateless".
func (e era) label() string {
	if e.stateless {
		return e.version + "/stateless"
	}
	return e.version + "/sessions"
}

// suite is the conformance suite's scenario set: "all" includes the pending
// and draft scenarios (MRTR, caching, header validation) besides the active
// ones; a scenario the go-sdk server fails directly is only reported.
const suite = "all"

// runTimeout bounds one run of the suite (one era, one target).
const runTimeout = 4 * time.Minute

var (
	repoRoot string // the checkout
	here     string // interop/conformance
)

func init() {
	_, file, _, _ := runtime.Caller(0)
	here = filepath.Dir(file)
	repoRoot = filepath.Dir(filepath.Dir(here))
}

// TestServerConformance runs every era against both targets, all four runs
// at once, and compares them scenario by scenario.
func TestServerConformance(t *testing.T) {
	node := filepath.Join(here, "node_modules", ".bin", "node")
	cli := filepath.Join(here, "node_modules", "@modelcontextprotocol", "conformance", "dist", "index.js")
	for _, need := range []string{node, cli} {
		if _, err := os.Stat(need); err != nil {
			t.Skipf("%s is missing: run `make deps` (npm ci --prefix interop/conformance)", need)
		}
	}
	if toolNames != "" && !hasServerKey("tool_names") {
		t.Fatalf("toolNames = %q but config.ServerConfig has no server.tool_names key", toolNames)
	}
	if toolNames == "" && hasServerKey("tool_names") {
		t.Logf("note: server.tool_names exists now: set toolNames = \"bare\" and shrink expected-failures.txt")
	}
	expected, err := readExpected(filepath.Join(here, "expected-failures.txt"))
	if err != nil {
		t.Fatal(err)
	}

	tmp := t.TempDir()
	everything, isogate := buildBinaries(t, tmp)

	type job struct {
		era     era
		through bool // through isogate
	}
	var jobs []job
	for _, e := range eras {
		jobs = append(jobs, job{e, false}, job{e, true})
	}
	results := make([]map[string]scenario, len(jobs))
	durations := make([]time.Duration, len(jobs))
	var wg sync.WaitGroup
	for i, j := range jobs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			name := fmt.Sprintf("%s-%s-%s", j.era.version, mode(j.era.stateless), target(j.through))
			dir := filepath.Join(tmp, name)
			var url string
			var stop func()
			var err error
			if j.through {
				url, stop, err = startGateway(dir, isogate, everything, j.era.stateless)
			} else {
				url, stop, err = startDirect(dir, everything, j.era.stateless)
			}
			if err != nil {
				t.Errorf("%s: %v", name, err)
				return
			}
			defer stop()
			start := time.Now()
			results[i], err = runSuite(node, cli, url, j.era.version, filepath.Join(dir, "out"))
			durations[i] = time.Since(start)
			if err != nil {
				t.Errorf("%s: %v", name, err)
			}
		}()
	}
	wg.Wait()
	if t.Failed() {
		return
	}

	var table strings.Builder
	fmt.Fprintf(&table, "%-21s %-10s %-16s %-16s %s\n", "era", "scenarios", "direct passing", "isogate passing", "run time direct / isogate")
	for k, e := range eras {
		direct, through := results[2*k], results[2*k+1]
		problems, notes := compare(e.label(), direct, through, expected[e.label()])
		for _, n := range notes {
			t.Log(n)
		}
		for _, p := range problems {
			t.Error(p)
		}
		delete(expected, e.label())
		fmt.Fprintf(&table, "%-21s %-10d %-16d %-16d %s / %s\n", e.label(), len(direct),
			passing(direct), passing(through), durations[2*k].Round(100*time.Millisecond), durations[2*k+1].Round(100*time.Millisecond))
	}
	for v := range expected {
		t.Errorf("expected-failures.txt: era %s is not run", v)
	}
	t.Logf("MCP conformance suite (server scenarios, suite %q), go-sdk everything-server directly and behind isogate:\n%s", suite, table.String())
}

func mode(stateless bool) string {
	if stateless {
		return "stateless"
	}
	return "sessions"
}

func target(through bool) string {
	if through {
		return "isogate"
	}
	return "direct"
}

// compare applies the ratchet to one era: it returns the problems that fail
// the test and notes on scenarios that fail directly (ignored). listed is
// the era's part of expected-failures.txt.
func compare(version string, direct, through map[string]scenario, listed map[string]string) (problems, notes []string) {
	listed = maps.Clone(listed)
	for _, name := range slices.Sorted(maps.Keys(direct)) {
		d := direct[name]
		g, ran := through[name]
		reason, isListed := listed[name]
		delete(listed, name)
		switch {
		case !d.passed():
			notes = append(notes, fmt.Sprintf("%s %s: fails directly too (ignored): %s", version, name, d.why()))
			if isListed {
				notes = append(notes, fmt.Sprintf("%s %s: listed in expected-failures.txt but fails directly (%s)", version, name, reason))
			}
		case !ran:
			problems = append(problems, fmt.Sprintf("%s %s: passes directly but was not run through isogate", version, name))
		case g.passed() && isListed:
			problems = append(problems, fmt.Sprintf("%s %s: passes through isogate now: remove it from expected-failures.txt (was: %s)", version, name, reason))
		case !g.passed() && !isListed:
			problems = append(problems, fmt.Sprintf("%s %s: passes directly, fails through isogate: %s\n\t(to accept it for now, add to expected-failures.txt: %s %s <reason>)", version, name, g.why(), version, name))
		}
	}
	for _, name := range slices.Sorted(maps.Keys(listed)) {
		problems = append(problems, fmt.Sprintf("expected-failures.txt: %s %s is not a scenario of that era: remove it", version, name))
	}
	return problems, notes
}

// scenario is the outcome of one scenario: its checks, as the suite wrote
// them to checks.json (or one FAILURE when it wrote none).
type scenario struct {
	Checks []check
}

type check struct {
	ID           string `json:"id"`
	Status       string `json:"status"` // SUCCESS, FAILURE, WARNING, INFO, SKIPPED
	ErrorMessage string `json:"errorMessage"`
}

// passed is the suite's own verdict on a scenario (the tier check's): no
// FAILURE check and at least one SUCCESS. A WARNING (a SHOULD not met) alone
// fails nothing, as in the suite's ✓/✗ summary.
func (s scenario) passed() bool {
	ok := false
	for _, c := range s.Checks {
		switch c.Status {
		case "FAILURE":
			return false
		case "SUCCESS":
			ok = true
		}
	}
	return ok
}

// why names the checks that were not met, FAILURE first.
func (s scenario) why() string {
	var out []string
	for _, st := range []string{"FAILURE", "WARNING"} {
		for _, c := range s.Checks {
			if c.Status == st {
				out = append(out, fmt.Sprintf("%s %s: %s", st, c.ID, firstLine(c.ErrorMessage, 200)))
			}
		}
	}
	if len(out) == 0 {
		return "no check succeeded"
	}
	return strings.Join(out, "; ")
}

func passing(m map[string]scenario) int {
	n := 0
	for _, s := range m {
		if s.passed() {
			n++
		}
	}
	return n
}

// runningLine is how the suite announces each scenario on stdout.
var runningLine = regexp.MustCompile(`(?m)^=== Running scenario: (\S+) ===$`)

// resultDir is the directory the suite writes a scenario's checks.json to:
// server-<scenario>-<ISO timestamp with dashes>.
var resultDir = regexp.MustCompile(`^server-(.+)-\d{4}-\d{2}-\d{2}T[\d-]+Z$`)

// runSuite runs the suite's server scenarios of one era against url and
// reads each scenario's checks.json from out. A scenario the suite announced
// but wrote no result for counts as failed.
func runSuite(node, cli, url, version, out string) (map[string]scenario, error) {
	ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, cli, "server", "--url", url, "--spec-version", version, "--suite", suite, "-o", out)
	cmd.Dir = here
	cmd.Env = append(hermeticEnv(), "NO_COLOR=1")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run() // exits 1 when a scenario fails: judged below
	if ctx.Err() != nil {
		return nil, fmt.Errorf("the suite did not finish within %v\nstdout:\n%s\nstderr:\n%s", runTimeout, tail(stdout.String()), tail(stderr.String()))
	}
	results := map[string]scenario{}
	for _, m := range runningLine.FindAllStringSubmatch(stdout.String(), -1) {
		results[m[1]] = scenario{Checks: []check{{ID: m[1], Status: "FAILURE", ErrorMessage: "the suite wrote no checks.json (see its stderr)"}}}
	}
	if len(results) == 0 {
		return nil, fmt.Errorf("the suite ran no scenario (%v)\nstdout:\n%s\nstderr:\n%s", err, tail(stdout.String()), tail(stderr.String()))
	}
	entries, _ := os.ReadDir(out)
	for _, e := range entries {
		m := resultDir.FindStringSubmatch(e.Name())
		if m == nil {
			continue
		}
		if _, announced := results[m[1]]; !announced {
			return nil, fmt.Errorf("result %s is of no announced scenario", e.Name())
		}
		raw, err := os.ReadFile(filepath.Join(out, e.Name(), "checks.json"))
		if err != nil {
			continue
		}
		var s scenario
		if err := json.Unmarshal(raw, &s.Checks); err != nil {
			return nil, fmt.Errorf("%s/checks.json: %v", e.Name(), err)
		}
		results[m[1]] = s
	}
	return results, nil
}

// buildBinaries builds the go-sdk's conformance everything-server (at the
// version go.mod requires, from the module cache) and isogate.
func buildBinaries(t *testing.T, dir string) (everything, isogate string) {
	everything = filepath.Join(dir, "everything-server")
	isogate = filepath.Join(dir, "isogate")
	builds := [][]string{
		{"build", "-o", everything, "github.com/modelcontextprotocol/go-sdk/conformance/everything-server"},
		{"build", "-o", isogate, "./cmd/isogate"},
	}
	errs := make([]error, len(builds))
	var wg sync.WaitGroup
	for i, args := range builds {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cmd := exec.Command("go", args...)
			cmd.Dir = repoRoot
			if out, err := cmd.CombinedOutput(); err != nil {
				errs[i] = fmt.Errorf("go %s: %v\n%s", strings.Join(args, " "), err, out)
			}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	return everything, isogate
}

// startDirect runs the everything-server on a free loopback port and waits
// until it accepts connections.
func startDirect(dir, everything string, stateless bool) (string, func(), error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", nil, err
	}
	addr, err := freeAddr()
	if err != nil {
		return "", nil, err
	}
	logs := &testutil.Buffer{}
	cmd := exec.Command(everything, "-http", addr, fmt.Sprintf("-stateless=%t", stateless))
	cmd.Env = hermeticEnv()
	cmd.Stdout, cmd.Stderr = logs, logs
	if err := cmd.Start(); err != nil {
		return "", nil, err
	}
	stop := func() { terminate(cmd) }
	deadline := time.Now().Add(30 * time.Second)
	for {
		if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
			c.Close()
			return "http://" + addr + "/mcp", stop, nil
		}
		if time.Now().After(deadline) {
			stop()
			return "", nil, fmt.Errorf("everything-server on %s did not accept connections within 30 s\n%s", addr, logs)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// servingURL finds the address in the line isogate logs once its HTTP
// listener is open.
var servingURL = regexp.MustCompile(`serving MCP over streamable HTTP url=(\S+)`)

// startGateway writes a configuration with the everything-server as the one
// stdio backend, runs `isogate serve --http` on a loopback port the kernel
// picks, and waits until /readyz says the backend is connected.
func startGateway(dir, isogate, everything string, stateless bool) (string, func(), error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", nil, err
	}
	conf := filepath.Join(dir, "isogate.yaml")
	if err := os.WriteFile(conf, []byte(gatewayConfig(dir, everything, stateless)), 0o644); err != nil {
		return "", nil, err
	}
	logs := &testutil.Buffer{}
	cmd := exec.Command(isogate, "serve", "--config", conf, "--http", "127.0.0.1:0")
	cmd.Env = hermeticEnv()
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return "", nil, err
	}
	if err := cmd.Start(); err != nil {
		return "", nil, err
	}
	stop := func() { terminate(cmd) }
	serving := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			logs.Write(append(sc.Bytes(), '\n'))
			if m := servingURL.FindStringSubmatch(sc.Text()); m != nil {
				select {
				case serving <- m[1]:
				default:
				}
			}
		}
	}()
	var url string
	select {
	case url = <-serving:
	case <-time.After(60 * time.Second):
		stop()
		return "", nil, fmt.Errorf("isogate serve --http did not say it serves within 60 s\n%s", logs)
	}
	ready := strings.TrimSuffix(url, "/mcp") + "/readyz"
	deadline := time.Now().Add(60 * time.Second)
	for {
		resp, err := http.Get(ready)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return url, stop, nil
			}
		}
		if time.Now().After(deadline) {
			stop()
			return "", nil, fmt.Errorf("isogate's backend was not ready within 60 s (%s)\n%s", ready, logs)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// gatewayConfig is the configuration of the gateway under test.
func gatewayConfig(dir, everything string, stateless bool) string {
	var b strings.Builder
	b.WriteString("server:\n")
	b.WriteString("  expose: passthrough\n")
	fmt.Fprintf(&b, "  stateless: %t\n", stateless)
	if toolNames != "" {
		fmt.Fprintf(&b, "  tool_names: %s\n", toolNames)
	}
	fmt.Fprintf(&b, "  cache_dir: %q\n", filepath.Join(dir, "cache"))
	b.WriteString("  log_format: text\n  log_level: info\n")
	b.WriteString("backends:\n  everything:\n")
	fmt.Fprintf(&b, "    command: %q\n", everything)
	return b.String()
}

// hasServerKey reports whether config.ServerConfig has a field with the
// given koanf key.
func hasServerKey(key string) bool {
	st := reflect.TypeOf(config.ServerConfig{})
	for i := 0; i < st.NumField(); i++ {
		if strings.Split(st.Field(i).Tag.Get("koanf"), ",")[0] == key {
			return true
		}
	}
	return false
}

// readExpected reads expected-failures.txt: one `<era> <scenario> <reason>`
// per line; blank lines and lines starting with # are ignored.
func readExpected(path string) (map[string]map[string]string, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	out := map[string]map[string]string{}
	for n, line := range strings.Split(string(raw), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Fields(line)
		if len(f) < 3 {
			return nil, fmt.Errorf("%s:%d: want `<era>/<mode> <scenario> <reason>`, got %q", path, n+1, line)
		}
		if out[f[0]] == nil {
			out[f[0]] = map[string]string{}
		}
		if _, dup := out[f[0]][f[1]]; dup {
			return nil, fmt.Errorf("%s:%d: %s %s is listed twice", path, n+1, f[0], f[1])
		}
		out[f[0]][f[1]] = strings.Join(f[2:], " ")
	}
	return out, nil
}

// hermeticEnv is the test's environment without ISOGATE_* settings, which
// would change the gateway under test.
func hermeticEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "ISOGATE_") {
			env = append(env, kv)
		}
	}
	return env
}

// freeAddr returns a loopback address with a port nobody listens on now.
func freeAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}

// terminate stops a process started by the test: SIGTERM, then SIGKILL.
func terminate(cmd *exec.Cmd) {
	if cmd.Process == nil {
		return
	}
	_ = cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		_ = cmd.Process.Kill()
		<-done
	}
}

func firstLine(s string, max int) string {
	s, _, _ = strings.Cut(s, "\n")
	return textcut.Clip(s, max, "…")
}

// tail is the end of a long output, for an error message.
func tail(s string) string {
	if len(s) > 4000 {
		return "…" + textcut.Suffix(s, 4000)
	}
	return s
}
