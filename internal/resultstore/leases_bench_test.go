package resultstore_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/isogate/isogate/internal/resultstore"
)

// BenchmarkLeaseRenewRedis is the cost of one heartbeat (a task's lease
// renewed on Redis: one script round trip), and of one scan for lapsed
// leases with none lapsed, the work each replica does every third of
// store.lease_ttl.
func BenchmarkLeaseRenewRedis(b *testing.B) {
	l := resultstore.NewRedisLeases(newRedis(b, resultstore.Limits{}))
	ctx := context.Background()
	for i := range 32 {
		if err := l.Hold(ctx, fmt.Sprint("task-", i), "holder", []byte(`{"task":"x"}`), time.Minute, time.Hour); err != nil {
			b.Fatal(err)
		}
	}
	b.Run("renew", func(b *testing.B) {
		for b.Loop() {
			if err := l.Renew(ctx, "task-0", "holder", time.Minute); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("scan", func(b *testing.B) {
		for b.Loop() {
			if _, err := l.Lapsed(ctx, 16); err != nil {
				b.Fatal(err)
			}
		}
	})
}
