package interop

import (
	"regexp"
	"strings"
	"testing"
)

// chainProgressReport is the report of scripts/chain_progress.mjs.
type chainProgressReport struct {
	Chain struct {
		IsError bool
		Text    string
	}
	Wire []struct {
		Progress, Total float64
		Message         string
	}
}

// TestTypeScriptSDKChainProgressHasATotal: a run's progress, as the
// official TypeScript SDK client receives it, carries a total once a
// backend reports its own (server-everything's 3 steps), so a client can
// draw a bar: progress increases, the total never decreases and is never
// below the progress, the last notification is complete (progress =
// total); a backend step reads "everything: 1/3" (no double space when
// the backend sends no message).
func TestTypeScriptSDKChainProgressHasATotal(t *testing.T) {
	t.Parallel()
	var r chainProgressReport
	runNodeInto(t, &r, "chain_progress.mjs", "--http", gateways.http(t, "").url)
	if r.Chain.IsError || !strings.Contains(r.Chain.Text, "completed") {
		t.Fatalf("chain: %+v", r.Chain)
	}
	step := regexp.MustCompile(`^everything: [1-3]/3$`)
	steps, withTotal := 0, 0
	for i, m := range r.Wire {
		if step.MatchString(m.Message) {
			steps++
		} else if !strings.HasPrefix(m.Message, "completed everything.") {
			t.Errorf("progress message %q", m.Message)
		}
		if m.Total > 0 {
			withTotal++
			if m.Total < m.Progress {
				t.Errorf("progress %v over its total %v", m.Progress, m.Total)
			}
		}
		if i > 0 {
			prev := r.Wire[i-1]
			if m.Progress <= prev.Progress || (prev.Total > 0 && m.Total < prev.Total) {
				t.Errorf("notification %d (%+v) after %+v", i, m, prev)
			}
		}
	}
	last := r.Wire[len(r.Wire)-1]
	if steps != 3 || withTotal < 3 || last.Total != last.Progress {
		t.Fatalf("%d backend steps, %d with a total, last %+v; want 3, every one from the first step, a complete last: %+v", steps, withTotal, last, r.Wire)
	}
}
