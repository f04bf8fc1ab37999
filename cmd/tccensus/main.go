// Command tccensus measures what sandbox.typecheck: strict would refuse
// among the programs the repository's tests and benchmarks run: it runs
// them with the type-check census on (codemode.CensusEnv: every tier-3
// program run with typecheck off is also checked, and recorded with how
// its run ended) and summarises the census.
//
//	go run ./cmd/tccensus                    # run every suite, then summarise
//	go run ./cmd/tccensus -run 'gateway interop' -dir DIR  # some suites, into DIR
//	go run ./cmd/tccensus -summary -dir DIR  # summarise an existing census
//	go run ./cmd/tccensus -recheck -dir DIR  # check its programs again (a changed checker), then summarise
//	go run ./cmd/tccensus -args              # the argument check's census alone (quicker)
//
// The suites: gateway, interop, codemode (internal/codemode and
// cmd/isogate), bench (the bench module's tests) and bench-sections (the
// benchmark sections that send programs to code mode, -quick).
//
// Each distinct program is counted once. A program with a certain
// diagnostic would be refused in strict mode: listed with how its run
// ended unchecked, for review (a valid program among them is a false
// positive of the checker). A program whose plan the policy refuses (a
// denied tool: PLAN_DENIED in warn and strict) is listed apart. Exit
// status 1 when a program refused with TYPECHECK_FAILED ran without error
// unchecked (the likeliest false positives).
//
// The same runs measure the argument check (pipeline.ArgsCensusEnv): each
// distinct tool call, whether the check would refuse it with
// INVALID_ARGUMENTS, and how the backend answered; a call it would refuse
// that the backend answered without error is a false positive (exit status
// 1 too).
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/isogate/isogate/internal/codemode"
	"github.com/isogate/isogate/internal/pipeline"
	"github.com/isogate/isogate/internal/typecheck"
)

// suite is one set of tests run under the census.
type suite struct {
	name string
	dir  string // relative to the repository root
	args []string
}

// suites are the repository's runners of code-mode programs.
var suites = []suite{
	{"gateway", ".", []string{"test", "-count=1", "-p=1", "-timeout=30m", "./gateway/"}},
	{"interop", ".", []string{"test", "-count=1", "-p=1", "-timeout=30m", "./interop/"}},
	{"codemode", ".", []string{"test", "-count=1", "-p=1", "-timeout=30m", "./internal/codemode/", "./cmd/isogate/"}},
	{"bench", "bench", []string{"test", "-count=1", "-p=1", "-timeout=30m", "-run", "Test", "./..."}},
	{"bench-sections", "bench", []string{"run", "./cmd/benchreport", "-quick", "-sections",
		"Code-mode dispatch tiers,End-to-end,UTCP,Context efficiency,Code-mode targets,durable,principals", "-out", os.DevNull}},
}

func main() {
	dir := flag.String("dir", "", "the census directory (default: a new temporary one)")
	summary := flag.Bool("summary", false, "summarise the census in -dir without running anything")
	recheck := flag.Bool("recheck", false, "check the programs of the census in -dir again with this checker, then summarise")
	only := flag.String("run", "", "run only these suites (space-separated names)")
	verbose := flag.Bool("v", false, "list every program with a diagnostic, hints included")
	argsOnly = flag.Bool("args", false, "measure the argument check only (pipeline.ArgsCensusEnv; no type check census): quicker")
	flag.Parse()
	if *recheck {
		*summary = true
		rechecking = true
	}
	if !*summary {
		if *dir == "" {
			d, err := os.MkdirTemp("", "tccensus-")
			if err != nil {
				fatal(err)
			}
			*dir = d
		}
		root, err := repoRoot()
		if err != nil {
			fatal(err)
		}
		for _, s := range suites {
			if *only != "" && !strings.Contains(" "+*only+" ", " "+s.name+" ") {
				continue
			}
			fmt.Fprintf(os.Stderr, "tccensus: %s: go %s\n", s.name, strings.Join(s.args, " "))
			cmd := exec.Command("go", s.args...)
			cmd.Dir = filepath.Join(root, s.dir)
			cmd.Env = append(os.Environ(), pipeline.ArgsCensusEnv+"="+*dir)
			if !*argsOnly {
				cmd.Env = append(cmd.Env, codemode.CensusEnv+"="+*dir)
			}
			cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
			if err := cmd.Run(); err != nil {
				fmt.Fprintf(os.Stderr, "tccensus: %s: %v (its programs are counted all the same)\n", s.name, err)
			}
		}
		fmt.Fprintf(os.Stderr, "tccensus: census in %s\n", *dir)
	}
	code := 0
	if files, _ := filepath.Glob(filepath.Join(*dir, "census-*.jsonl")); len(files) > 0 || !*argsOnly {
		code = summarise(*dir, *verbose)
	}
	os.Exit(max(code, summariseArgs(*dir)))
}

// argsOnly: the runs measure the argument check only (-args).
var argsOnly *bool

// rechecking: summarise checks each program again (-recheck).
var rechecking bool

// checkAgain checks e's program against its recorded declarations with
// this build's checker, replacing what the census recorded.
func checkAgain(dir string, e *codemode.CensusEntry, checker *typecheck.Checker) {
	text, err := os.ReadFile(filepath.Join(dir, e.Decls))
	if err != nil || e.Decls == "" {
		e.Unchecked = fmt.Sprintf("no declarations to check it again against (%s): %v", e.Decls, err)
		return
	}
	rep, err := checker.Check(context.Background(), typecheck.Declarations{ID: e.Decls, Text: string(text)}, e.Program, e.Module)
	if err != nil {
		e.Unchecked = err.Error()
		return
	}
	e.Diagnostics, e.Unchecked = rep.Diagnostics, ""
}

func repoRoot() (string, error) {
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}").Output()
	if err != nil {
		return "", fmt.Errorf("finding the repository: %w", err)
	}
	return strings.TrimSpace(string(out)), nil
}

func fatal(err error) {
	fmt.Fprintln(os.Stderr, "tccensus:", err)
	os.Exit(2)
}

// program is one distinct program and its runs.
type program struct {
	entry codemode.CensusEntry // the first run
	runs  int
	ok    int // runs that ended without error
	codes map[string]int
}

func summarise(dir string, verbose bool) int {
	programs := map[string]*program{}
	lines := 0
	var checker *typecheck.Checker
	if rechecking {
		checker = typecheck.New(typecheck.Options{Timeout: time.Minute})
		defer checker.Close()
		if err := checker.Warm(context.Background()); err != nil {
			fatal(err)
		}
	}
	files := eachEntry(dir, "census-*.jsonl", func(e codemode.CensusEntry) {
		lines++
		key := e.Decls + "\x00" + e.Code
		p := programs[key]
		if p == nil {
			if checker != nil {
				checkAgain(dir, &e, checker)
			}
			p = &program{entry: e, codes: map[string]int{}}
			programs[key] = p
		}
		p.runs++
		if e.IsError {
			p.codes[e.ErrorCode]++
		} else {
			p.ok++
		}
	})
	if files == 0 {
		fatal(fmt.Errorf("no census files in %s", dir))
	}
	var certain, denied, hinted, unchecked []*program
	diags := 0
	for _, p := range programs {
		diags += len(p.entry.Diagnostics)
		switch {
		case p.entry.Unchecked != "":
			unchecked = append(unchecked, p)
		case p.entry.PlanDenied != "":
			denied = append(denied, p)
		case hasCertain(p.entry):
			certain = append(certain, p)
		case len(p.entry.Diagnostics) > 0:
			hinted = append(hinted, p)
		}
	}
	byCode := func(ps []*program) {
		sort.Slice(ps, func(i, j int) bool { return ps[i].entry.Code < ps[j].entry.Code })
	}
	byCode(certain)
	byCode(denied)
	byCode(hinted)
	byCode(unchecked)
	okCertain := 0
	texts := map[string]bool{}
	for _, p := range programs {
		texts[p.entry.Code] = true
	}
	fmt.Printf("census: %d runs, %d distinct programs (%d distinct pairs of program and declarations), %d diagnostics\n", lines, len(texts), len(programs), diags)
	deniedOK := 0
	fmt.Printf("programs refused by the policy on their plan (PLAN_DENIED in warn and strict: a denied tool): %d\n", len(denied))
	for _, p := range denied {
		if p.ok > 0 {
			deniedOK++
		}
		describe(p, true)
		fmt.Printf("    %s\n", p.entry.PlanDenied)
	}
	fmt.Printf("  of which ran without error unchecked: %d\n", deniedOK)
	fmt.Printf("programs with a certain diagnostic (TYPECHECK_FAILED in strict): %d\n", len(certain))
	for _, p := range certain {
		if p.ok > 0 {
			okCertain++
		}
		describe(p, true)
	}
	fmt.Printf("programs with hints only (run in strict, notices in warn): %d\n", len(hinted))
	for _, p := range hinted {
		if verbose {
			describe(p, false)
		}
	}
	fmt.Printf("programs not checked: %d\n", len(unchecked))
	for _, p := range unchecked {
		fmt.Printf("  %s: %s\n", oneLine(p.entry.Code), p.entry.Unchecked)
	}
	fmt.Printf("TYPECHECK_FAILED in strict but ran without error unchecked (false positives unless the program catches its own mistake): %d\n", okCertain)
	if okCertain > 0 {
		return 1
	}
	return 0
}

func hasCertain(e codemode.CensusEntry) bool {
	for _, d := range e.Diagnostics {
		if d.Certain {
			return true
		}
	}
	return false
}

func describe(p *program, certainOnly bool) {
	fmt.Printf("- program (%d runs, %d without error, errors %v):\n    %s\n", p.runs, p.ok, p.codes, oneLine(p.entry.Code))
	for _, d := range p.entry.Diagnostics {
		if certainOnly && !d.Certain {
			continue
		}
		fmt.Printf("    certain=%v %s\n", d.Certain, d.Hint())
	}
	if p.entry.IsError {
		fmt.Printf("    unchecked run: %s\n", oneLine(p.entry.Text))
	}
}

func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 300 {
		s = s[:300] + "…"
	}
	return s
}
