package bench

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/isogate/isogate/internal/typecheck"
)

func init() {
	RegisterSection(Section{Title: "The type checker's fair share under type bombs (issue 42)", Name: "checker-fairness", Order: 14, Run: checkerFairnessSection})
}

// goalCheckerFairness is issue 42's goal: with bob sending type bombs in a
// loop, alice's check p50 within ×2 of quiet.
var goalCheckerFairness = goal{bound: 2}

// checkerFairnessSection measures typecheck.MeasureFairness on a checker
// of its own (the in-process checker; process isolation's checker worker
// hosts the same lanes).
func checkerFairnessSection(ctx context.Context, cfg ReportConfig) (string, error) {
	warmUp := 300
	if cfg.Smoke || cfg.Quick {
		warmUp = 20
	}
	c := typecheck.New(typecheck.Options{Timeout: time.Minute})
	defer c.Close()
	f, err := typecheck.MeasureFairness(ctx, c, warmUp)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "One checker, its two lanes warmed with %d programs. Alice checks the 40-line program of the section above 40 times alone, "+
		"then while bob sends issue 42's type bomb (`type R<N extends any[]> = N['length'] extends 5000 ? N : R<[...N, 1]>`) two at a time in a loop, "+
		"each ended inside the checker at its 2 s budget (TYPECHECK_TIMEOUT) and its lane rebuilt, until 4 bombs ended: %d checks of alice's under %d bombs (%d timed out). "+
		"Every check of alice's passed: a bomber waits behind his own checks.\n\n", warmUp, f.Checks, f.Bombs, f.TimedOut)
	b.WriteString("| figure | this run | goal | met |\n|---|---:|---:|:---:|\n")
	met := "**no**"
	if goalCheckerFairness.met(f.Ratio()) {
		met = "yes"
	}
	fmt.Fprintf(&b, "| alice's check p50 under bob's bombs ÷ quiet (%s ms ÷ %s ms) | %s | %s | %s |\n",
		ms(f.Bombed), ms(f.Quiet), times(f.Ratio()), goalCheckerFairness.format(times), met)
	return b.String(), nil
}
