package interop

import (
	"strings"
	"testing"
)

// readsReport is the report of scripts/principals_reads.mjs.
type readsReport struct {
	Stored  map[string][]struct{ Run, Result string }
	Attacks map[string][]struct{ Got, Unknown map[string]string }
	Own     map[string]map[string]string
}

// TestTypeScriptSDKPrincipalsCannotReadEachOthersResults: alice and bob,
// with the official TypeScript SDK client, run programs at the same time;
// each then reads the other's run records and stored results every way a
// client can (resources/read of the run, the result and a part of it;
// read_result whole and by range) while more programs of both run. Every
// answer is an error, exactly the one an id of the same shape that names
// nothing gets, and never holds the other's secret; each reads its own.
func TestTypeScriptSDKPrincipalsCannotReadEachOthersResults(t *testing.T) {
	t.Parallel()
	gw := principalsGateway(t)
	var r readsReport
	runNodeInto(t, &r, "principals_reads.mjs", "--http", gw.url,
		"--alice", principalTokens["alice"], "--bob", principalTokens["bob"])
	for who, stored := range r.Stored {
		for i, s := range stored {
			if s.Run == "" || s.Result == "" {
				t.Fatalf("%s's program %d left no run id or result URI: %+v", who, i, s)
			}
		}
	}
	for attacker, attempts := range r.Attacks {
		if len(attempts) != 2 {
			t.Errorf("%s made %d attempts, want 2", attacker, len(attempts))
		}
		for _, a := range attempts {
			if len(a.Got) != 5 {
				t.Errorf("%s's attempt covers %d ways in, want 5: %v", attacker, len(a.Got), a.Got)
			}
			for what, got := range a.Got {
				if !strings.HasPrefix(got, "error: ") || got != a.Unknown[what] || strings.Contains(got, "secret") {
					t.Errorf("%s reading the other's %s: %q; want what an id naming nothing gets: %q", attacker, what, got, a.Unknown[what])
				}
			}
		}
	}
	for who, own := range r.Own {
		for what, got := range own {
			if !strings.HasPrefix(got, "read: ") || (what != "read_result-range" && !strings.Contains(got, who+"-secret-0")) {
				t.Errorf("%s reading her own %s: %.200s", who, what, got)
			}
		}
	}
	if len(r.Own) != 2 {
		t.Errorf("own reads: %v", r.Own)
	}
}
