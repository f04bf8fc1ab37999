package surface

import (
	"context"
	"encoding/json"
	"log/slog"
	"testing"
	"time"

	"github.com/isogate/isogate/internal/pipeline"
	"github.com/isogate/isogate/internal/resultstore"
)

// A run record is kept compact (the store holds what json.Marshal writes,
// not the indented form, about twice as large for small values) and read
// back indented, as before.
func TestRunRecordKeptCompact(t *testing.T) {
	ctx := context.Background()
	store := resultstore.NewMemory(resultstore.Limits{TTL: time.Hour, MaxBytes: 1 << 20}, resultstore.CountDataOnly())
	runs := newRunStore(store, "")
	rec := &pipeline.RunRecord{ID: "run-1", Code: "return 1", Tier: "3", Outcome: "ok", Console: []string{"a", "b"},
		Calls: []pipeline.CallRecord{{}, {}}}
	runs.put(ctx, "sess", rec, slog.New(slog.DiscardHandler))
	compact, _ := json.Marshal(rec)
	want, _ := json.MarshalIndent(rec, "", "  ")
	if held, _ := store.Bytes("sess"); held != len(compact) {
		t.Fatalf("the store holds %d bytes for a record of %d compact (%d indented)", held, len(compact), len(want))
	}
	if got, ok := runs.get(ctx, "sess", "run-1"); !ok || got != string(want) {
		t.Fatalf("read back (%v):\n%s\nwant:\n%s", ok, got, want)
	}
}
