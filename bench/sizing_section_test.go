package bench

import (
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/isogate/isogate/internal/resultstore/redistest"
)

// TestSizingSectionRecordsSmaller runs the sizing section once (50 entries
// a kind, a redis-server of its own) and reads its table: each run record
// as the store keeps it now holds fewer data bytes, and is charged fewer
// in memory and on Redis, than the same record stored whole before.
func TestSizingSectionRecordsSmaller(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a redis-server")
	}
	cfg := DefaultReportConfig(true)
	cfg.Smoke = true
	body, err := sizingSection(t.Context(), cfg)
	if errors.Is(err, redistest.ErrNoRedis) {
		t.Skip(err)
	} else if err != nil {
		t.Fatal(err)
	}
	const before = ", stored whole as before stop 44"
	rows := map[string][]int{}
	for _, line := range strings.Split(body, "\n") {
		cells := strings.Split(strings.Trim(line, "| "), " | ")
		if len(cells) != 5 || !strings.HasPrefix(cells[0], "run record") {
			continue
		}
		var nums []int
		for _, c := range cells[1:] {
			n, err := strconv.Atoi(c)
			if err != nil {
				t.Fatalf("row %q: %v", line, err)
			}
			nums = append(nums, n)
		}
		rows[cells[0]] = nums
	}
	pairs := 0
	for name, was := range rows {
		kind, ok := strings.CutSuffix(name, before)
		if !ok {
			continue
		}
		now, ok := rows[kind]
		if !ok {
			t.Fatalf("no row %q beside %q:\n%s", kind, name, body)
		}
		pairs++
		// data, memory store charges, Redis store charges (Redis's own
		// used_memory delta is left out: allocator classes make it coarse).
		for _, col := range []int{0, 1, 3} {
			if now[col] >= was[col] {
				t.Errorf("%s: %d, not fewer than the %d before (column %d):\n%s", kind, now[col], was[col], col+1, body)
			}
		}
	}
	if pairs != 3 {
		t.Fatalf("%d before/now pairs of rows, want 3:\n%s", pairs, body)
	}
	t.Logf("\n%s", body)
}
