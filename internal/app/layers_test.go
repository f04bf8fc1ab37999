package app

import (
	"bufio"
	"bytes"
	"os/exec"
	"strings"
	"testing"
)

const module = "github.com/isogate/isogate"

// layers places every package of the module on a floor; a package may
// import only packages on its own floor or below. design/ARCHITECTURE.md
// draws the same picture. A new package must be placed here.
var layers = []struct {
	floor    int
	packages []string // a trailing "/..." covers the subpackages too
}{
	{0, []string{"config"}}, // a leaf: imports nothing of the module
	{0, []string{"v8sandbox/..."}},
	// The TypeScript checker runs on v8sandbox and knows nothing above it;
	// checkworker hosts it in a procpool checker worker (procpool knows
	// neither).
	{0, []string{"internal/typecheck", "internal/typecheck/checkworker"}},
	// Fair shares of slots: the checker's lanes (internal/typecheck,
	// checkworker) as well as V8 runs and backend calls.
	{0, []string{"internal/fairshare"}},
	{0, []string{"internal/textcut", "internal/jsonscan"}}, // leaves, used by v8sandbox too
	{0, []string{"internal/httpbody"}},                     // a leaf: a request body read into memory
	{1, []string{"internal/resume", "internal/jssyntax", "internal/jsvalue", "internal/jsvalue/jsvaluetest", "internal/sdklog", "internal/logsite", "internal/stats",
		"internal/metrics", "internal/tracing", "internal/resultstore/...", "internal/authn",
		"internal/backendauth", "internal/jsonrpcio"}},
	{1, []string{"internal/lexicon/..."}}, // stems and WordNet synonyms, for the catalogue's search
	{2, []string{"internal/backend", "internal/catalog", "internal/toolcache", "internal/codemode/output",
		"internal/codemode/fastpath"}},
	{1, []string{"internal/kv"}},                          // the durable key-value store (bbolt or Redis)
	{2, []string{"internal/embedsearch"}},                 // search_tools' embeddings, over the catalogue
	{2, []string{"internal/programs", "internal/skills"}}, // saved programs; the Skills extension
	// Programs' own state per principal, on internal/kv.
	{2, []string{"internal/state"}},

	{3, []string{"internal/pipeline"}},
	{4, []string{"internal/codemode", "internal/runcode", "internal/replay", "internal/desk"}},
	{5, []string{"internal/observe", "internal/tasks", "internal/clientreq", "internal/approvals"}},
	{6, []string{"internal/surface"}},
	{7, []string{"internal/app", "internal/console"}},
	{8, []string{"gateway"}},
	{9, []string{"cmd/...", "bench/...", "deploy/...", "interop/...", "internal/testutil", "internal/testutil/fakeembed"}},
}

// leaves import nothing of the module.
var leaves = map[string]bool{"config": true, "internal/textcut": true, "internal/jsonscan": true}

// floorOf returns the floor of a package path relative to the module.
func floorOf(rel string) (int, bool) {
	for _, l := range layers {
		for _, p := range l.packages {
			if rel == p || (strings.HasSuffix(p, "/...") && (rel == strings.TrimSuffix(p, "/...") || strings.HasPrefix(rel, strings.TrimSuffix(p, "...")))) {
				return l.floor, true
			}
		}
	}
	return 0, false
}

// TestDependenciesPointDown enforces the direction of the layout over the
// module's real imports (go list): nothing imports a package on a higher
// floor, so internal/ never imports gateway or cmd, config and v8sandbox
// import nothing above themselves, and the lowest layers know nothing of
// the MCP surface.
func TestDependenciesPointDown(t *testing.T) {
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command on PATH")
	}
	cmd := exec.Command(gobin, "list", "-f", "{{.ImportPath}} {{join .Imports \" \"}}", module+"/...")
	cmd.Dir = "../.."
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	checked := 0
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		pkg := strings.TrimPrefix(strings.TrimPrefix(fields[0], module), "/")
		floor, ok := floorOf(pkg)
		if !ok {
			t.Errorf("package %s is on no floor: place it in layers (and in design/ARCHITECTURE.md)", pkg)
			continue
		}
		checked++
		for _, imp := range fields[1:] {
			if imp != module && !strings.HasPrefix(imp, module+"/") {
				continue
			}
			dep := strings.TrimPrefix(strings.TrimPrefix(imp, module), "/")
			if leaves[pkg] {
				t.Errorf("%s imports %s: %s is a leaf and must import nothing of the module", pkg, dep, pkg)
				continue
			}
			depFloor, ok := floorOf(dep)
			if ok && depFloor > floor {
				t.Errorf("%s (floor %d) imports %s (floor %d): dependencies must point down", pkg, floor, dep, depFloor)
			}
		}
	}
	if checked < 20 {
		t.Fatalf("only %d packages checked: go list output not understood", checked)
	}
}
