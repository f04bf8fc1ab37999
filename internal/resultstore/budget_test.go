package resultstore

import (
	"runtime"
	"testing"
	"time"
)

// heapInUse collects garbage and returns the bytes of live heap objects.
func heapInUse() uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// A Memory store's byte budget is what it really holds: filled with many
// small entries (as run records and small results are), the Go heap grows
// by what the store says it holds, within a tenth. Counting the data
// alone, the store held half as much again as its budget (×1.54 here).
func TestMemoryBudgetIsWhatItHolds(t *testing.T) {
	const n = 20000
	sizes := []int{60, 150, 333, 700, 1500}
	src := make([]byte, 1500)
	owners := []string{OwnerKey("principal:a", "s1"), OwnerKey("principal:a", "s2"), OwnerKey("principal:b", "")}
	s := NewMemory(Limits{TTL: time.Hour, MaxBytes: 1 << 30, OwnerBytes: 1 << 30})
	before := heapInUse()
	for i := range n {
		if _, err := s.Put(ctx, owners[i%len(owners)], src[:sizes[i%len(sizes)]]); err != nil {
			t.Fatal(err)
		}
	}
	grown := float64(heapInUse()) - float64(before)
	held, _ := s.Bytes("")
	runtime.KeepAlive(s)
	ratio := grown / float64(held)
	t.Logf("%d entries: heap grew %.0f bytes, the store counts %d (heap ÷ counted %.3f)", n, grown, held, ratio)
	if ratio < 0.9 || ratio > 1.1 {
		t.Fatalf("the heap grew ×%.2f what the store counts (want within 0.9–1.1)", ratio)
	}
}

// Eviction gives back what was charged: after every entry was pushed out
// by a newer one, the store counts exactly what its live entries cost.
func TestMemoryChargesReturnOnEviction(t *testing.T) {
	s := NewMemory(Limits{TTL: time.Hour, MaxBytes: 10_000, OwnerBytes: 10_000})
	for i := range 200 {
		put(t, s, "sess", string(make([]byte, 1+i%300)))
	}
	total, own := s.Bytes("sess")
	want := 0
	for _, el := range s.byID {
		e := el.Value.(*entry)
		want += cap(e.data) + len(e.id) + EntryOverhead
	}
	if total != want || own != want || total > 10_000 {
		t.Fatalf("store counts %d (account %d), its entries cost %d (budget 10000)", total, own, want)
	}
}
