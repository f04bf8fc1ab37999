package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/spf13/pflag"

	"github.com/isogate/isogate/internal/kv"
	"github.com/isogate/isogate/internal/programs"
)

// savedReport is what `isogate check --saved --json` prints.
type savedReport struct {
	// Checked counts the versions judged (stale or not); those in
	// Undecided are not among them.
	Checked int `json:"checked"`
	// Stale are the versions that no longer check, with the diagnostics.
	Stale []programs.StaleVersion `json:"stale"`
	// Undecided are the versions ("owner/name@v") that could not be
	// judged, and why (a backend not connected, the checker down).
	Undecided map[string]string `json:"undecided"`
}

// runCheckSaved checks every saved program (store.data_dir or
// store.redis_url) against the live catalogue without marking any: exit
// 0 none stale, 1 some stale, 2 some could not be judged (or the store
// did not answer).
func runCheckSaved(ctx context.Context, env *cliEnv, fs *pflag.FlagSet, args []string) int {
	if len(args) > 0 {
		fmt.Fprintln(env.stderr, "isogate check: --saved checks the saved programs: give no program")
		return checkUsage
	}
	g, _ := oneShotGateway(ctx, env, fs)
	if g == nil {
		return checkUsage // it said why
	}
	defer g.Close()
	rep, err := g.CheckSaved(ctx)
	if errors.Is(err, kv.ErrHeld) {
		fmt.Fprintf(env.stderr, "isogate check: the saved programs could not be checked: a running gateway holds the store (%v).\n"+
			"That gateway checks its saved programs itself whenever its tools change: its /readyz names the stale ones and the console's Programs page shows their diagnostics. "+
			"Or stop it and run isogate check --saved again (or run it against a copy of the data directory, or a store.redis_url the gateways share).\n", err)
		return checkUsage
	}
	if err != nil {
		fmt.Fprintln(env.stderr, "isogate check: the saved programs could not be checked:", err)
		return checkUsage
	}
	out := savedReport{Checked: rep.Checked, Stale: rep.Stale, Undecided: rep.Undecided}
	if out.Stale == nil {
		out.Stale = []programs.StaleVersion{}
	}
	printReport(env, fs, out, printSaved)
	switch {
	case len(out.Stale) > 0:
		return checkMistake
	case len(out.Undecided) > 0:
		return checkUsage
	}
	return checkClean
}

// printSaved writes the report for a terminal: each stale version with
// its diagnostics, each one not judged with why, then the counts.
func printSaved(w io.Writer, r savedReport) {
	for _, s := range r.Stale {
		fmt.Fprintf(w, "stale: %s (%s)\n", s.Ref(), s.Code)
		for line := range strings.SplitSeq(s.Diagnostics, "\n") {
			fmt.Fprintln(w, "  "+line)
		}
	}
	for _, ref := range slices.Sorted(maps.Keys(r.Undecided)) {
		fmt.Fprintf(w, "not checked: %s: %s\n", ref, r.Undecided[ref])
	}
	fmt.Fprintf(w, "%d saved version(s): %d checked, %d stale, %d not checked\n", r.Checked+len(r.Undecided), r.Checked, len(r.Stale), len(r.Undecided))
}
