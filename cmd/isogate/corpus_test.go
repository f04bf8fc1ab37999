package main

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/isogate/isogate/v8sandbox"
	"github.com/isogate/isogate/v8sandbox/procpool/corpus"
)

// resultCases are corpus cases about the script's completion value: they
// fail only when it is awaited or serialized, which jsrun does not do by
// contract (its output is what emit() wrote), so they succeed there.
var resultCases = []string{
	"bigint_result", "dynamic_import", "getter_loop_in_result", "getter_throws_in_result",
	"json_cycle_result", "json_parse_deep_nesting", "never_settles", "proxy_ownkeys_loop",
	"proxy_result_huge", "proxy_result_throws", "recursion_in_tojson", "rejection_message_getter_loop",
	"result_huge_array", "result_huge_string", "result_tojson_huge",
}

// TestHostileCorpusThroughJsrun runs every applicable hostile program
// through the `isogate jsrun` binary (process isolation): each gets its
// typed error as one line of JSON within its deadline + 15 s (a hang guard), and a normal
// request succeeds afterwards.
func TestHostileCorpusThroughJsrun(t *testing.T) {
	cases, err := corpus.Load(corpus.Dir())
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		if slices.Contains(c.Uses, "tick") {
			continue // jsrun offers only emit and read_input
		}
		// jsrun's emit(s) appends String(s) by contract: a cyclic argument is fine.
		if slices.Contains(resultCases, c.Name) || c.Name == "json_cycle_host_argument" {
			c.Expect = append(c.Expect, corpus.OK) // success, or the original outcome if it strikes before the end
		}
		t.Run(c.Name, func(t *testing.T) {
			t.Parallel()
			wall := c.Timeout
			if slices.Equal(c.Expect, []v8sandbox.Code{v8sandbox.CodeTimeout}) {
				wall = min(wall, 300*time.Millisecond)
			}
			req, _ := json.Marshal(map[string]any{"source": c.Source, "input": "",
				"limits": map[string]any{"wall_ms": wall.Milliseconds(), "heap_mb": c.HeapMB, "output_kb": corpus.OutputLimitBytes / 1024}})
			start := time.Now()
			_, stderr, code := runBinary(t, string(req), "jsrun")
			if elapsed := time.Since(start); elapsed > wall+15*time.Second { // a hang guard: process start-up at load, -race
				t.Errorf("took %v, deadline %v", elapsed, wall)
			}
			if code == 0 {
				if !slices.Contains(c.Expect, corpus.OK) {
					t.Fatalf("succeeded, want one of %v", c.Expect)
				}
				return
			}
			var e struct{ Code v8sandbox.Code }
			if err := json.Unmarshal([]byte(stderr), &e); err != nil || strings.Count(stderr, "\n") != 1 {
				t.Fatalf("stderr is not one JSON line: %q (exit %d)", stderr, code)
			}
			if !slices.Contains(c.Expect, e.Code) {
				t.Fatalf("got %s, want one of %v: %s", e.Code, c.Expect, stderr)
			}
		})
	}
}
