package bench

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/isogate/isogate/bench/conformance"
	"github.com/isogate/isogate/internal/typecheck"
	"github.com/isogate/isogate/v8sandbox/procpool/corpus"
)

// corpusProgram is one program of the repository run outside code mode's
// engine (so the type-check census does not see it), with the
// declarations of what it runs against.
type corpusProgram struct {
	name, source, decls string
}

// benchDecls declares the backends of the code-mode sections (tiers,
// end to end, UTCP): bench.noop({x}) in-process, and server-everything's
// echo({message}), as the catalogue declares them.
const benchDecls = `interface IsogateBackend_0 { echo(args: { message: string }): Promise<any>; }
declare var everything: IsogateBackend_0;
interface IsogateBackend_1 { noop(args: { x: number }): Promise<any>; }
declare var bench: IsogateBackend_1;
`

// staticCorpus collects the programs that run on the engines directly:
// the workloads (their tools are host functions: declared as such), the
// ECMAScript conformance set, the hostile procpool corpus (its harness's
// tick and emit) and the isogate programs of the UTCP section.
func staticCorpus(t *testing.T) []corpusProgram {
	t.Helper()
	var out []corpusProgram
	for _, w := range Workloads() {
		var d strings.Builder
		for _, tool := range w.Tools {
			fmt.Fprintf(&d, "declare function %s(args?: any): Promise<any>;\n", tool.Name)
		}
		out = append(out, corpusProgram{"workload " + w.Name, w.Source, d.String()})
	}
	for _, c := range conformance.Checks {
		out = append(out, corpusProgram{"conformance " + c.Name, c.Source, ""})
	}
	cases, err := corpus.Load(corpus.Dir())
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		out = append(out, corpusProgram{"hostile " + c.Name, c.Source,
			"declare function tick(x?: any): Promise<number>;\ndeclare function emit(s: any): void;\n"})
	}
	for _, w := range utcpWorkloads() {
		out = append(out, corpusProgram{"utcp " + w.name, w.isogate, benchDecls})
	}
	return out
}

// TestTypecheckStaticCorpus checks every program of the bench workloads,
// the conformance set, the hostile corpus and the UTCP section as
// sandbox.typecheck would: none may have a certain diagnostic (strict
// would refuse a valid program). Hints are counted, and listed with -v.
// The programs run through code mode elsewhere are measured by the
// census (go run ./cmd/tccensus).
func TestTypecheckStaticCorpus(t *testing.T) {
	if testing.Short() {
		t.Skip("loads the TypeScript compiler")
	}
	checker := typecheck.New(typecheck.Options{Timeout: time.Minute}) // generous: a loaded machine must not make a check "unchecked"
	defer checker.Close()
	ctx := context.Background()
	if err := checker.Warm(ctx); err != nil {
		t.Fatal(err)
	}
	programs := staticCorpus(t)
	byKind := map[string][2]int{} // kind → programs, programs with hints
	hints := 0
	for i, p := range programs {
		rep, err := checker.Check(ctx, typecheck.Declarations{ID: fmt.Sprintf("static-%d", i), Text: p.decls}, p.source, false)
		if err != nil {
			t.Fatalf("%s: %v", p.name, err)
		}
		kind, _, _ := strings.Cut(p.name, " ")
		n := byKind[kind]
		n[0]++
		if len(rep.Diagnostics) > 0 {
			n[1]++
		}
		byKind[kind] = n
		for _, d := range rep.Diagnostics {
			if d.Certain {
				t.Errorf("%s: strict would refuse it: %s", p.name, d.Hint())
				continue
			}
			hints++
			t.Logf("%s: hint: %s", p.name, d.Hint())
		}
	}
	var kinds []string
	for k, n := range byKind {
		kinds = append(kinds, fmt.Sprintf("%s %d (%d with hints)", k, n[0], n[1]))
	}
	sort.Strings(kinds)
	t.Logf("%d programs: %s; %d hints", len(programs), strings.Join(kinds, ", "), hints)
}
