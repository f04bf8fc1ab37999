package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/spf13/pflag"

	"github.com/isogate/isogate/config"
	"github.com/isogate/isogate/internal/codemode"
	"github.com/isogate/isogate/internal/pipeline"
	"github.com/isogate/isogate/internal/typecheck"
)

// The exit codes of `isogate check`.
const (
	checkClean   = 0 // no certain mistake, no denied tool
	checkMistake = 1 // a certain mistake in a tool call, a tool the configuration denies, or code that does not parse
	checkUsage   = 2 // usage, configuration, or the program could not be checked
)

func init() {
	register(&command{
		name: "check",
		args: "(FILE | -e CODE | - | --saved)",
		summary: "Type-check a call_tool_chain program against the live tool catalogue without running it: " +
			"the diagnostics and the plan (the tools it may call, whether in a loop). Exit 0 clean, 1 certain mistakes, " +
			"a denied tool or a syntax error, 2 usage or configuration error. With --saved, checks every saved program instead: " +
			"exit 1 when any is stale, 2 when one could not be checked.",
		flags: func(fs *pflag.FlagSet) {
			config.RegisterFileFlags(fs)
			fs.StringP("eval", "e", "", "program text")
			fs.Bool("json", false, "print the report as JSON")
			fs.Bool("saved", false, "check every saved program (store.data_dir or store.redis_url) instead: exit 1 when any is stale")
			fs.Duration("wait", 10*time.Second, "how long to wait for backends to connect")
		},
		run: runCheck,
	})
}

// checkReport is what `isogate check --json` prints.
type checkReport struct {
	Diagnostics []typecheck.Diagnostic `json:"diagnostics"`
	Plan        *pipeline.Plan         `json:"plan"`
	// Denied is the policy's refusal of the plan (PLAN_DENIED), if any.
	Denied string `json:"denied,omitempty"`
	// Certain counts the certain mistakes.
	Certain int `json:"certain"`
	// Syntax is the code's syntax error as a run would refuse it, if any.
	Syntax string `json:"syntax_error,omitempty"`
}

func runCheck(ctx context.Context, env *cliEnv, fs *pflag.FlagSet, args []string) int {
	if saved, _ := fs.GetBool("saved"); saved {
		return runCheckSaved(ctx, env, fs, args)
	}
	code, err := programText(env, fs, args)
	if err != nil {
		fmt.Fprintln(env.stderr, "isogate check:", err)
		return checkUsage
	}
	g, _ := oneShotGateway(ctx, env, fs)
	if g == nil {
		return checkUsage // it said why
	}
	defer g.Close()
	rep, plan, err := g.Engine.Check(ctx, code)
	if err != nil {
		fmt.Fprintln(env.stderr, "isogate check: the program could not be checked:", err)
		return checkUsage
	}
	out := checkReport{Diagnostics: rep.Diagnostics, Plan: plan, Certain: len(rep.Certain())}
	if out.Diagnostics == nil {
		out.Diagnostics = []typecheck.Diagnostic{}
	}
	if err := codemode.CheckSyntax(code); err != nil {
		out.Syntax = err.Error()
	}
	var refused *pipeline.Error
	if err := pipeline.AdmitPlan(ctx, g.Policy, plan, false); errors.As(err, &refused) {
		out.Denied = refused.Error()
	}
	printReport(env, fs, out, printCheck)
	if out.Certain > 0 || out.Denied != "" || out.Syntax != "" {
		return checkMistake
	}
	return checkClean
}

// printCheck writes the report for a terminal: each diagnostic as the
// agent's hint (certain ones marked error), then the plan.
func printCheck(w io.Writer, r checkReport) {
	for _, d := range r.Diagnostics {
		level := "hint"
		if d.Certain {
			level = "error"
		}
		fmt.Fprintf(w, "%s: %s\n", level, d.Hint())
	}
	if r.Syntax != "" {
		fmt.Fprintln(w, "error: "+r.Syntax)
	}
	if r.Denied != "" {
		fmt.Fprintln(w, "error: "+r.Denied)
	}
	if r.Plan == nil {
		return
	}
	if len(r.Plan.Tools) == 0 && !r.Plan.Partial {
		fmt.Fprintln(w, "plan: the program calls no tool")
		return
	}
	if len(r.Plan.Tools) == 0 { // only calls the checker cannot name (a computed name, a backend not connected)
		fmt.Fprintln(w, "plan: the program names no tool the checker knows")
	} else {
		fmt.Fprintln(w, "plan: the program may call")
	}
	fmt.Fprint(w, r.Plan.Text())
}
