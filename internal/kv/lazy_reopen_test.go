package kv

import (
	"context"
	"errors"
	"testing"
	"time"
)

// TestLazyAnswersAFailedOpenFromMemory: a store that cannot be opened (a
// bbolt file another process holds waits its whole open timeout) is not
// opened again by every use for reopenAfter; then it is, and once it
// opens it serves.
func TestLazyAnswersAFailedOpenFromMemory(t *testing.T) {
	clock := time.Unix(1_700_000_000, 0)
	opens, fail := 0, true
	l := NewLazy(func() (Store, error) {
		opens++
		if fail {
			return nil, errors.New("held by another process")
		}
		return NewMemory(), nil
	}, nil)
	l.now = func() time.Time { return clock }
	ctx := context.Background()
	for range 3 {
		if _, err := l.Get(ctx, "ns", "k"); !errors.Is(err, ErrUnavailable) {
			t.Fatalf("Get on a store that cannot open: %v, want ErrUnavailable", err)
		}
	}
	if opens != 1 {
		t.Fatalf("opened %d times within %s of a failure, want once", opens, reopenAfter)
	}
	clock = clock.Add(reopenAfter)
	fail = false
	if _, err := l.Get(ctx, "ns", "k"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Get after the store came back: %v, want ErrNotFound", err)
	}
	if opens != 2 {
		t.Fatalf("opened %d times, want a second open after %s", opens, reopenAfter)
	}
}
