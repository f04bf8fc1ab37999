package surface

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/isogate/isogate/internal/pipeline"
	"github.com/isogate/isogate/internal/resultstore"
)

// A run store at its cap (store.max_bytes) full of another principal's
// records refuses a record with STORE_FULL and says so to its caller (the
// response then names no record), instead of dropping it silently.
func TestRunRecordRefusedWhenFull(t *testing.T) {
	ctx := context.Background()
	store := resultstore.NewMemory(resultstore.Limits{TTL: time.Hour, MaxBytes: 600, OwnerBytes: 600}, resultstore.CountDataOnly())
	runs := newRunStore(store, "")
	quiet := slog.New(slog.DiscardHandler)
	big := &pipeline.RunRecord{ID: "run-a", Code: strings.Repeat("x", 400), Outcome: "ok"}
	if err := runs.put(ctx, "principal:alice", big, quiet); err != nil {
		t.Fatalf("a record that fits: %v", err)
	}
	err := runs.put(ctx, "principal:bob", &pipeline.RunRecord{ID: "run-b", Code: strings.Repeat("y", 400), Outcome: "ok"}, quiet)
	if !errors.Is(err, resultstore.ErrFull) || !strings.Contains(err.Error(), resultstore.CodeStoreFull) {
		t.Fatalf("a record past the cap: %v, want STORE_FULL", err)
	}
	if _, ok := runs.get(ctx, "principal:alice", "run-a"); !ok {
		t.Fatal("alice's record gone")
	}
}
