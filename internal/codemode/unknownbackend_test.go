package codemode

import (
	"testing"

	"github.com/isogate/isogate/internal/typecheck"
)

// TestUnknownBackendOfAConfiguredBackendDropped: a name the declarations
// leave out is a misspelling (kept, certain) unless it is a configured
// backend, down or with every tool denied (dropped: the run or the plan
// says which).
func TestUnknownBackendOfAConfiguredBackendDropped(t *testing.T) {
	v := buildView(nil, nil, []string{"counter", "dead-one"}, 1, false)
	rep := &typecheck.Report{Diagnostics: []typecheck.Diagnostic{
		{Kind: "unknown_backend", Certain: true, Name: "countr", Suggestion: "counter"},
		{Kind: "unknown_backend", Certain: true, Name: "dead_one", Suggestion: "counter"},
	}}
	got := withoutDenied(v, rep)
	if len(got.Diagnostics) != 1 || got.Diagnostics[0].Name != "countr" {
		t.Fatalf("kept %+v; want only countr's", got.Diagnostics)
	}
}
