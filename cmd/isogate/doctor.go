package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/spf13/pflag"

	"github.com/isogate/isogate/config"
	"github.com/isogate/isogate/internal/app"
	"github.com/isogate/isogate/internal/backend"
	"github.com/isogate/isogate/internal/codemode"
	"github.com/isogate/isogate/internal/surface"
	"github.com/isogate/isogate/internal/typecheck"
	"github.com/isogate/isogate/v8sandbox/procpool"
)

func init() {
	register(&command{
		name: "doctor",
		summary: "Check a configuration end to end: run a program in the sandbox and report its isolation and confinement " +
			"layer by layer, connect every backend, list shared names. Exit 1 when something is wrong.",
		flags: func(fs *pflag.FlagSet) {
			config.RegisterFileFlags(fs)
			fs.Duration("wait", 20*time.Second, "how long to wait for backends to connect")
			fs.Bool("json", false, "print the report as JSON")
		},
		run: func(ctx context.Context, env *cliEnv, fs *pflag.FlagSet, _ []string) int {
			g, code := oneShotGateway(ctx, env, fs)
			if g == nil {
				return code
			}
			defer g.Close()
			r := diagnose(ctx, g)
			printReport(env, fs, r, printDoctor)
			if len(r.Problems) > 0 {
				return 1
			}
			return 0
		},
	})
}

// doctorReport is what `isogate doctor` found.
type doctorReport struct {
	Sandbox        surface.SandboxReport   `json:"sandbox"`
	SandboxRun     string                  `json:"sandbox_run"` // "ok" or the failure
	Backends       []backend.Status        `json:"backends"`
	NameCollisions []surface.NameCollision `json:"name_collisions"`
	// Embeddings is search.embeddings' state: "ok" once the tool vectors
	// are computed, else why not; "" when it is off.
	Embeddings string `json:"search_embeddings,omitempty"`
	// Store is whether the durable store (saved programs, their state,
	// skills) answers: "ok", else why not.
	Store    string   `json:"store"`
	Problems []string `json:"problems"`
}

// embeddingsWait bounds doctor's wait for the tool vectors of
// search.embeddings (the endpoint's first answers).
const embeddingsWait = 20 * time.Second

// diagnose runs a program through V8 (which starts a sandbox worker, so
// the confinement it obtained is known) and reads the backends' state.
func diagnose(ctx context.Context, g *app.App) doctorReport {
	r := doctorReport{Problems: []string{}, NameCollisions: g.Surface.NameCollisions()}
	warmErr := warmChecker(ctx, g)
	resp := g.Engine.Execute(ctx, codemode.Request{Code: "let s = 0; for (let i = 1; i <= 10; i++) s += i; return s"})
	switch {
	case resp.IsError:
		r.SandboxRun = resp.Render()
		r.Problems = append(r.Problems, "sandbox: a trivial program failed: "+resp.Render())
	case resp.Text != "55":
		r.SandboxRun = "unexpected result " + resp.Text
		r.Problems = append(r.Problems, "sandbox: a trivial program returned "+resp.Text+", want 55")
	default:
		r.SandboxRun = "ok"
	}
	r.Sandbox = g.Sandbox()
	if c := r.Sandbox.Confinement; c != nil && c.Mode != procpool.ConfinementOff {
		for _, l := range c.Layers {
			if l.Level != procpool.LevelOn {
				r.Problems = append(r.Problems, fmt.Sprintf("sandbox: confinement layer %s is %s (%s)", l.Name, l.Level, l.Detail))
			}
		}
	}
	if tc := r.Sandbox.Typecheck; tc != nil {
		switch {
		case tc.State == typecheck.StateFailed:
			r.Problems = append(r.Problems, "typecheck: the checker could not start: "+tc.Error)
		case warmErr != nil:
			r.Problems = append(r.Problems, fmt.Sprintf("typecheck: the checker is %s: %v", tc.State, warmErr))
		}
	}
	if err := g.StoreHealth(ctx); err != nil {
		r.Store = err.Error()
		r.Problems = append(r.Problems, "store: "+r.Store+" (saved programs, state and skills fail with STORE_UNAVAILABLE)")
	} else {
		r.Store = "ok"
	}
	r.Backends = g.Backends.Status()
	for _, st := range r.Backends {
		if st.State != backend.StateHealthy {
			r.Problems = append(r.Problems, fmt.Sprintf("backend %s is %s: %s", st.Name, st.State, st.LastError))
		}
	}
	if g.Semantic != nil {
		wctx, cancel := context.WithTimeout(ctx, embeddingsWait)
		err := g.Semantic.WaitSettled(wctx)
		cancel()
		if err != nil {
			r.Embeddings = "tool vectors not computed: " + err.Error()
			r.Problems = append(r.Problems, "search embeddings: "+r.Embeddings+" (search_tools ranks by words only)")
		} else {
			r.Embeddings = "ok"
		}
	}
	return r
}

// printDoctor writes the report for a person.
func printDoctor(w io.Writer, r doctorReport) {
	fmt.Fprintf(w, "sandbox: %s isolation, V8 %s, trivial run: %s\n", r.Sandbox.Isolation, r.Sandbox.V8Version, r.SandboxRun)
	if c := r.Sandbox.Confinement; c != nil {
		fmt.Fprintf(w, "confinement (%s):\n", c.Mode)
		for _, l := range c.Layers {
			fmt.Fprintf(w, "  %-13s %-8s %s\n", l.Name, l.Level, l.Detail)
		}
	}
	if tc := r.Sandbox.Typecheck; tc != nil {
		printTypecheck(w, tc)
	}
	if r.Embeddings != "" {
		fmt.Fprintln(w, "search embeddings: "+r.Embeddings)
	}
	fmt.Fprintln(w, "store: "+r.Store)
	fmt.Fprintf(w, "backends: %d\n", len(r.Backends))
	for _, st := range r.Backends {
		line := fmt.Sprintf("  %-16s %-10s %3d tools", st.Name, st.State, st.ToolCount)
		if st.LastError != "" {
			line += "  " + st.LastError
		}
		fmt.Fprintln(w, line)
	}
	// One line for the names the same backends share, settled the same way
	// (two filesystem servers share fourteen tools).
	for _, g := range surface.FoldCollisions(r.NameCollisions) {
		fmt.Fprintf(w, "shared %s names %v: %v (listed under them: %s)\n", g.Kind, g.Names, g.Backends, orNone(g.Winner))
	}
	if len(r.Problems) == 0 {
		fmt.Fprintln(w, "no problems found")
		return
	}
	fmt.Fprintf(w, "%d problem(s):\n", len(r.Problems))
	for _, p := range r.Problems {
		fmt.Fprintln(w, "  - "+p)
	}
}

// doctorCheckerWait bounds the wait for the type checker to load (a
// checker worker's start loads the compiler: seconds on a loaded machine).
const doctorCheckerWait = time.Minute

// warmChecker loads the type checker (sandbox.typecheck on), so that the
// trivial program is checked and the report says whether the checker
// starts.
func warmChecker(ctx context.Context, g *app.App) error {
	if g.Sandbox().Typecheck == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, doctorCheckerWait)
	defer cancel()
	return g.Typecheck.Warm(ctx)
}

// printTypecheck writes the type checker's lines of the report.
func printTypecheck(w io.Writer, tc *surface.TypecheckReport) {
	line := fmt.Sprintf("typecheck: %s, %s", tc.Mode, tc.State)
	if tc.Where == typecheck.WhereWorker {
		line += " (worker process"
		if wk := tc.Worker; wk != nil {
			line += fmt.Sprintf(" pid %d, RSS %s, up %s", wk.PID, mebibytes(wk.RSSBytes),
				time.Duration(wk.UptimeSeconds*float64(time.Second)).Round(100*time.Millisecond))
		}
		line += ")"
	} else {
		line += " (in the gateway's process)"
	}
	line += fmt.Sprintf(", heap %s, restarts %d", mebibytes(tc.HeapUsedBytes), tc.Restarts)
	if tc.Error != "" {
		line += ": " + tc.Error
	}
	fmt.Fprintln(w, line)
	cc := tc.CodeCache
	if cc.Path == "" {
		fmt.Fprintln(w, "  code cache: none (no server.cache_dir)")
	} else {
		fmt.Fprintf(w, "  code cache: %s (%s): hits %d, misses %d, rejected %d, invalid %d, written %d\n",
			cc.Path, mebibytes(cc.SizeBytes), cc.Hits, cc.Misses, cc.Rejected, cc.Invalid, cc.Written)
	}
	c := tc.Checks
	fmt.Fprintf(w, "  checks: ok %d, refused %d, failed %d, timeout %d, skipped %d, cancelled %d (mean %.1f ms)\n",
		c.OK, c.Refused, c.Failed, c.Timeout, c.Skipped, c.Cancelled, c.MeanMS)
}

// mebibytes renders a byte count for a person.
func mebibytes(n int64) string { return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20)) }

func orNone(s string) string {
	if s == "" {
		return "none, all prefixed"
	}
	return s
}
