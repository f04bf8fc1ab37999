package codemode

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/isogate/isogate/internal/catalog"
	"github.com/isogate/isogate/internal/codemode/output"
)

// savedProgramOf is a saved program of about size bytes: helper functions
// over args, none calling a tool (what is timed is the script, not a
// backend).
func savedProgramOf(size int) string {
	var b strings.Builder
	for i := 0; b.Len() < size; i++ {
		fmt.Fprintf(&b, "function step%d(v) {\n  const parts = String(v).split(\"\").map((c, j) => c.charCodeAt(0) * (j + %d));\n  return parts.reduce((a, x) => (a + x) %% 1000003, %d);\n}\n", i, i, i)
	}
	b.WriteString("let acc = args.n;\nacc = step0(acc);\nreturn acc")
	return b.String()
}

// BenchmarkSavedProgramCompile (issue 45, compile once per version): a
// saved program called again on the warm in-process pool, for a 1 KB and
// a 19 KB program, three ways: its code run as a call_tool_chain program
// with the arguments in its first line (programs.Wrap: how direct calls
// ran before, and what re-sending the code costs), with the same
// arguments each time ("same": the worker's script cache and V8's
// compilation cache find the whole script, as V8's code cache would) and
// with new ones each time ("new": compiled again); and "inlined", a run
// of one call programs["p@1"](args) (how a direct call runs now): the
// program's function is compiled once per version by esbuild, and the
// gateway's own work on the run's code (analysis for the fast tiers and
// the result rewrite) is on that one line, not on the program. The
// variants alternate within each iteration so that they share the
// machine's state; each reports its time per call and its ratio to
// "same".
func BenchmarkSavedProgramCompile(b *testing.B) {
	e, err := New(Options{Runner: sharedPool(), Catalog: FromCatalog(catalog.New()), Caller: sessionCaller{},
		Output: output.DefaultOptions(), Logger: discardLogger(), Timeout: time.Minute})
	if err != nil {
		b.Fatal(err)
	}
	wrap := func(code string, n int) string {
		args, _ := json.Marshal(map[string]int{"n": n})
		lit, _ := json.Marshal(string(args))
		return "const args = JSON.parse(" + string(lit) + "); " + code
	}
	for _, size := range []int{1 << 10, 19 << 10} {
		b.Run(fmt.Sprintf("bytes=%d", size), func(b *testing.B) {
			code := savedProgramOf(size)
			lib := &Library{Roots: []string{"p@1"}, Programs: map[string]*LibraryProgram{"p@1": {Name: "p@1", Ref: fmt.Sprintf("p@1/%d", size), Code: code}}}
			run := func(req Request) time.Duration {
				start := time.Now()
				if r := e.Execute(context.Background(), req); r.IsError || r.Tier != TierV8 {
					b.Fatalf("%s %s", r.Tier, r.Text)
				}
				return time.Since(start)
			}
			var same, fresh, inlined time.Duration
			i := 0
			for b.Loop() {
				i++
				same += run(Request{Code: wrap(code, 1)})
				fresh += run(Request{Code: wrap(code, i)})
				inlined += run(Request{Code: fmt.Sprintf("return await programs[\"p@1\"]({n: %d})", i), Programs: lib})
			}
			n := float64(b.N)
			b.ReportMetric(float64(same.Nanoseconds())/n, "same-ns/call")
			b.ReportMetric(float64(fresh.Nanoseconds())/n, "new-ns/call")
			b.ReportMetric(float64(inlined.Nanoseconds())/n, "inlined-ns/call")
			b.ReportMetric(float64(fresh)/float64(same), "new/same")
			b.ReportMetric(float64(inlined)/float64(same), "inlined/same")
		})
	}
}
