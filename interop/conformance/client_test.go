package conformance

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// clientSuites are the suite's client suites that hold the auth/*
// scenarios between them (each run by one node process, its scenarios at
// once; draft holds a few others, which the adapter declines at once).
var clientSuites = []string{"auth", "backcompat", "extensions", "draft"}

// clientSuiteTimeout bounds one suite run; each scenario's adapter has 30 s
// (the suite's --timeout).
const clientSuiteTimeout = 2 * time.Minute

// clientResultDir is the directory the suite writes a client auth
// scenario's checks.json to, under <out>/auth: <name>-<ISO timestamp>.
var clientResultDir = regexp.MustCompile(`^(.+)-\d{4}-\d{2}-\d{2}T[\d-]+Z$`)

// listedAuthScenario is how `conformance list` names a client auth scenario.
var listedAuthScenario = regexp.MustCompile(`(?m)^\s+- (auth/\S+)`)

// TestClientAuthConformance runs every auth/* client scenario (of
// `conformance list`) of the conformance suite against isogate as an OAuth client of its backends:
// the adapter (./client) configures the scenario's server as an HTTP
// backend with backends.<name>.auth, runs `isogate login` where the
// scenario wants the authorization code flow (playing the browser), and
// calls the backend's tool with `isogate exec`. A scenario that fails must
// be listed in expected-client-failures.txt; a listed one that passes fails
// the test until its line goes.
func TestClientAuthConformance(t *testing.T) {
	node := filepath.Join(here, "node_modules", ".bin", "node")
	cli := filepath.Join(here, "node_modules", "@modelcontextprotocol", "conformance", "dist", "index.js")
	for _, need := range []string{node, cli} {
		if _, err := os.Stat(need); err != nil {
			t.Skipf("%s is missing: run `make deps` (npm ci --prefix interop/conformance)", need)
		}
	}
	expected, err := readClientExpected(filepath.Join(here, "expected-client-failures.txt"))
	if err != nil {
		t.Fatal(err)
	}
	list, err := exec.Command(node, cli, "list").Output()
	if err != nil {
		t.Fatalf("conformance list: %v", err)
	}
	var names []string
	for _, m := range listedAuthScenario.FindAllStringSubmatch(string(list), -1) {
		names = append(names, m[1])
	}
	if len(names) == 0 {
		t.Fatalf("conformance list names no auth/ client scenario:\n%s", list)
	}

	tmp := t.TempDir()
	isogate, adapter := filepath.Join(tmp, "isogate"), filepath.Join(tmp, "client")
	for _, b := range [][]string{{"-o", isogate, "./cmd/isogate"}, {"-o", adapter, "./interop/conformance/client"}} {
		cmd := exec.Command("go", append([]string{"build"}, b...)...)
		cmd.Dir = repoRoot
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("go build %s: %v\n%s", b[len(b)-1], err, out)
		}
	}
	command := adapter + " --isogate " + isogate

	start := time.Now()
	outcomes := map[string]scenario{}
	for _, name := range names {
		outcomes[name] = scenario{Checks: []check{{ID: name, Status: "FAILURE", ErrorMessage: "not run by any of the suites " + strings.Join(clientSuites, ", ")}}}
	}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for _, suite := range clientSuites {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got, err := runClientSuite(node, cli, command, suite, filepath.Join(tmp, suite))
			if err != nil {
				t.Errorf("suite %s: %v", suite, err)
			}
			mu.Lock()
			defer mu.Unlock()
			for name, s := range got {
				if _, ok := outcomes[name]; ok {
					outcomes[name] = s
				}
			}
		}()
	}
	wg.Wait()
	for _, p := range compareClient(outcomes, expected) {
		t.Error(p)
	}
	t.Logf("MCP conformance suite, client auth scenarios against isogate's backend client: %d of %d pass (%d listed as expected failures) in %v",
		passing(outcomes), len(outcomes), len(expected), time.Since(start).Round(100*time.Millisecond))
}

// runClientSuite runs one client suite with the adapter and reads the
// checks.json of each auth scenario from out/auth.
func runClientSuite(node, cli, command, suite, out string) (map[string]scenario, error) {
	ctx, cancel := context.WithTimeout(context.Background(), clientSuiteTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, cli, "client", "--command", command, "--suite", suite,
		"--timeout", "30000", "-o", out)
	cmd.Dir = here
	cmd.Env = append(hermeticEnv(), "NO_COLOR=1")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	_ = cmd.Run() // exits 1 when a scenario fails: judged by its checks
	if ctx.Err() != nil {
		return nil, fmt.Errorf("did not finish within %v\nstdout:\n%s\nstderr:\n%s", clientSuiteTimeout, tail(stdout.String()), tail(stderr.String()))
	}
	entries, err := os.ReadDir(filepath.Join(out, "auth"))
	if err != nil {
		return nil, fmt.Errorf("no results (%v)\nstdout:\n%s\nstderr:\n%s", err, tail(stdout.String()), tail(stderr.String()))
	}
	results := map[string]scenario{}
	for _, e := range entries {
		m := clientResultDir.FindStringSubmatch(e.Name())
		if m == nil {
			continue
		}
		raw, err := os.ReadFile(filepath.Join(out, "auth", e.Name(), "checks.json"))
		if err != nil {
			return nil, err
		}
		var s scenario
		if err := json.Unmarshal(raw, &s.Checks); err != nil {
			return nil, fmt.Errorf("%s/checks.json: %v", e.Name(), err)
		}
		results["auth/"+m[1]] = s
	}
	return results, nil
}

// compareClient applies the ratchet to the client scenarios: a failing
// scenario must be listed, a listed one must fail, and every listed one
// must be a scenario that ran.
func compareClient(outcomes map[string]scenario, listed map[string]string) (problems []string) {
	for _, name := range slices.Sorted(maps.Keys(outcomes)) {
		s := outcomes[name]
		reason, isListed := listed[name]
		switch {
		case s.passed() && isListed:
			problems = append(problems, fmt.Sprintf("%s: passes now: remove it from expected-client-failures.txt (was: %s)", name, reason))
		case !s.passed() && !isListed:
			problems = append(problems, fmt.Sprintf("%s: fails: %s\n\t(to accept it for now, add to expected-client-failures.txt: %s <reason>)", name, s.why(), name))
		}
	}
	for _, name := range slices.Sorted(maps.Keys(listed)) {
		if _, ran := outcomes[name]; !ran {
			problems = append(problems, fmt.Sprintf("expected-client-failures.txt: %s is not a client auth scenario of the suite: remove it", name))
		}
	}
	return problems
}

// readClientExpected reads expected-client-failures.txt: one
// `<scenario> <reason>` per line; blank lines and # comments are ignored.
func readClientExpected(path string) (map[string]string, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for n, line := range strings.Split(string(raw), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		name, reason, _ := strings.Cut(line, " ")
		if reason = strings.TrimSpace(reason); reason == "" {
			return nil, fmt.Errorf("%s:%d: want `<scenario> <reason>`, got %q", path, n+1, line)
		}
		if _, dup := out[name]; dup {
			return nil, fmt.Errorf("%s:%d: %s is listed twice", path, n+1, name)
		}
		out[name] = reason
	}
	return out, nil
}
