package output

import (
	"regexp"
	"strings"
	"testing"
)

func TestBound(t *testing.T) {
	store := newStore(1 << 24)
	msg := "Error: " + strings.Repeat("x", 1e7) + " END"
	for _, limit := range []int{1000, 5000, 1 << 30} {
		got := Bound(ctx, msg, limit, "o", store)
		if want := min(limit, MaxOutputSizeCap); len(got) > want {
			t.Fatalf("limit %d: %d bytes", limit, len(got))
		}
		if !strings.HasPrefix(got, "Error: xxx") || !strings.Contains(got, "truncated") {
			t.Fatalf("limit %d: head or marker missing: %.100q", limit, got)
		}
		m := regexp.MustCompile(`isogate://result/([0-9a-f]{32})`).FindStringSubmatch(got)
		if m == nil {
			t.Fatalf("limit %d: no URI in %q", limit, got[len(got)-300:])
		}
		if full, err := store.Get(ctx, "o", m[1]); err != nil || string(full) != msg {
			t.Fatalf("limit %d: full text not kept: %v", limit, err)
		}
	}
	if got := Bound(ctx, "short", 1000, "o", store); got != "short" {
		t.Fatalf("short text changed: %q", got)
	}
	if got := Bound(ctx, msg, 1000, "o", nil); len(got) > 1000 || strings.Contains(got, "isogate://") {
		t.Fatalf("without a store: %d bytes %q", len(got), got)
	}
}
