package main

import (
	"fmt"
	"sort"
	"strings"

	"github.com/isogate/isogate/internal/pipeline"
)

// summariseArgs summarises the argument census (pipeline.ArgsCensusEnv,
// run alongside the type-check census): each distinct call (tool and
// arguments) the argument check saw, whether it would have refused it
// (INVALID_ARGUMENTS) and how the backend answered it, since under the
// census nothing is refused. A refused call the backend answered without
// error is a false positive: listed, and exit status 1.
func summariseArgs(dir string) int {
	calls := map[string]pipeline.ArgsCensusEntry{}
	tools := map[string]bool{}
	eachEntry(dir, "args-*.jsonl", func(e pipeline.ArgsCensusEntry) {
		calls[e.Tool+"\x00"+string(e.Args)+"\x00"+e.Refusal] = e
		tools[e.Tool] = true
	})
	var refused, falsePositives []pipeline.ArgsCensusEntry
	for _, e := range calls {
		if e.Refusal == "" {
			continue
		}
		refused = append(refused, e)
		if e.Error == "" && !e.ToolError {
			falsePositives = append(falsePositives, e)
		}
	}
	sort.Slice(refused, func(i, j int) bool {
		return refused[i].Tool+string(refused[i].Args) < refused[j].Tool+string(refused[j].Args)
	})
	fmt.Printf("\nargument check (INVALID_ARGUMENTS): %d distinct calls of %d tools checked, %d would be refused, %d of them answered without error by the backend (false positives)\n",
		len(calls), len(tools), len(refused), len(falsePositives))
	for _, e := range refused {
		outcome := "the backend refused it too: " + firstLine(e.Error)
		switch {
		case e.ToolError:
			outcome = "the backend answered with isError"
		case e.Error == "":
			outcome = "FALSE POSITIVE: the backend answered without error"
		}
		fmt.Printf("  %s(%.120s)\n    check: %.200s\n    %s\n", e.Tool, e.Args, e.Refusal, outcome)
	}
	if len(falsePositives) > 0 {
		return 1
	}
	return 0
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	if len(s) > 160 {
		s = s[:160] + "…"
	}
	return s
}
