package backend

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/isogate/isogate/config"
)

func TestUpdateAddsRemovesAndRestartsOnlyWhatChanged(t *testing.T) {
	m := startManager(t, Options{Specs: []Spec{
		inProcess("keep", newCalcServer()), inProcess("change", newCalcServer()), inProcess("drop", newCalcServer()),
	}})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := m.WaitHealthy(ctx); err != nil {
		t.Fatal(err)
	}
	kept := statusOf(t, m, "keep").ConnectedAt

	changed := inProcess("change", newCalcServer())
	changed.Timeout = 7 * time.Second
	res, err := m.Update([]Spec{inProcess("keep", newCalcServer()), changed, inProcess("new", newCalcServer())})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(res.Added, []string{"new"}) || !slices.Equal(res.Removed, []string{"drop"}) || !slices.Equal(res.Changed, []string{"change"}) {
		t.Fatalf("update result %+v", res)
	}
	if got := m.Backends(); !slices.Equal(got, []string{"change", "keep", "new"}) {
		t.Fatalf("backends after update: %v", got)
	}
	if err := m.WaitHealthy(ctx); err != nil {
		t.Fatal(err)
	}
	if st := statusOf(t, m, "keep"); !st.ConnectedAt.Equal(kept) {
		t.Errorf("untouched backend reconnected: %v → %v", kept, st.ConnectedAt)
	}
	for _, name := range []string{"keep", "change", "new"} {
		if _, err := m.CallTool(ctx, name, "add", map[string]any{"a": 1, "b": 2}); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	var unknown *UnknownBackendError
	if _, err := m.CallTool(ctx, "drop", "add", nil); !errors.As(err, &unknown) {
		t.Errorf("removed backend: %v", err)
	}
	if res, err := m.Update([]Spec{inProcess("keep", newCalcServer()), changed, inProcess("new", newCalcServer())}); err != nil || !res.Empty() {
		t.Errorf("same specs again: %+v %v", res, err)
	}
	// The tool policy and the priority are the pipeline's and the
	// surface's, not the manager's: a change to them alone keeps the backend
	// and its connection.
	connected := statusOf(t, m, "keep").ConnectedAt
	policed := inProcess("keep", newCalcServer())
	policed.Tools = config.ToolPolicy{Deny: []string{"add"}, Approve: []string{"*"}}
	policed.Priority = 3
	if res, err := m.Update([]Spec{policed, changed, inProcess("new", newCalcServer())}); err != nil || !res.Empty() {
		t.Errorf("tool policy change: %+v %v", res, err)
	}
	if st := statusOf(t, m, "keep"); !st.ConnectedAt.Equal(connected) {
		t.Errorf("tool policy change reconnected the backend: %v → %v", connected, st.ConnectedAt)
	}
}
