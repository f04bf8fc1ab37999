package conformance

import (
	"strings"
	"testing"
)

// TestCompare pins the ratchet's rule on made-up outcomes, without the suite.
func TestCompare(t *testing.T) {
	pass := scenario{Checks: []check{{ID: "a", Status: "SUCCESS"}, {ID: "b", Status: "INFO"}}}
	warn := scenario{Checks: []check{{ID: "a", Status: "SUCCESS"}, {ID: "w", Status: "WARNING", ErrorMessage: "a SHOULD"}}}
	fail := scenario{Checks: []check{{ID: "a", Status: "SUCCESS"}, {ID: "f", Status: "FAILURE", ErrorMessage: "broken\nsecond line"}}}
	empty := scenario{Checks: []check{{ID: "w", Status: "WARNING"}}}
	direct := map[string]scenario{
		"same": pass, "warned": warn, "regressed": pass, "accepted": pass, "fixed": pass,
		"hollow": pass, "broken-directly": fail, "missing": pass,
	}
	through := map[string]scenario{
		"same": pass, "warned": warn, "regressed": fail, "accepted": fail, "fixed": pass,
		"hollow": empty, "broken-directly": fail,
	}
	listed := map[string]string{"accepted": "a reason", "fixed": "was broken", "gone": "no such scenario", "broken-directly": "both"}
	problems, notes := compare("2026-07-28", direct, through, listed)
	want := []string{
		"2026-07-28 fixed: passes through isogate now: remove it",
		"2026-07-28 hollow: passes directly, fails through isogate: WARNING w",
		"2026-07-28 missing: passes directly but was not run through isogate",
		"2026-07-28 regressed: passes directly, fails through isogate: FAILURE f: broken\n",
		"expected-failures.txt: 2026-07-28 gone is not a scenario of that era",
	}
	if len(problems) != len(want) {
		t.Fatalf("problems:\n%s\nwant %d", strings.Join(problems, "\n"), len(want))
	}
	for i, w := range want {
		if !strings.HasPrefix(problems[i], w) {
			t.Errorf("problem %d = %q, want it to start with %q", i, problems[i], w)
		}
	}
	if len(notes) != 2 || !strings.Contains(notes[0], "broken-directly: fails directly too") || !strings.Contains(notes[1], "listed in expected-failures.txt but fails directly") {
		t.Errorf("notes: %q", notes)
	}
	if len(listed) != 4 {
		t.Errorf("compare changed its listed argument: %v", listed)
	}
}

// TestCompareClient pins the client ratchet's rule on made-up outcomes.
func TestCompareClient(t *testing.T) {
	pass := scenario{Checks: []check{{ID: "a", Status: "SUCCESS"}}}
	fail := scenario{Checks: []check{{ID: "f", Status: "FAILURE", ErrorMessage: "no"}}}
	outcomes := map[string]scenario{"auth/ok": pass, "auth/fixed": pass, "auth/broken": fail, "auth/known": fail}
	listed := map[string]string{"auth/fixed": "was broken", "auth/known": "not implemented", "auth/gone": "old"}
	problems := compareClient(outcomes, listed)
	want := []string{
		"auth/broken: fails: FAILURE f: no",
		"auth/fixed: passes now: remove it",
		"expected-client-failures.txt: auth/gone is not a client auth scenario",
	}
	if len(problems) != len(want) {
		t.Fatalf("problems:\n%s\nwant %d", strings.Join(problems, "\n"), len(want))
	}
	for i, w := range want {
		if !strings.HasPrefix(problems[i], w) {
			t.Errorf("problem %d = %q, want it to start with %q", i, problems[i], w)
		}
	}
}
