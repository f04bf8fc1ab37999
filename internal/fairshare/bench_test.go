package fairshare

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
)

// BenchmarkAcquireRelease measures one acquire and release of a slot of 8
// under contention from parallel goroutines: the plain channel semaphore the
// gateway used before fair shares, and Slots with 1, 8 and 64 principals
// (each goroutine acquires for its own principal; share 4).
func BenchmarkAcquireRelease(b *testing.B) {
	const capacity = 8
	b.Run("channel", func(b *testing.B) {
		sem := make(chan struct{}, capacity)
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				sem <- struct{}{}
				<-sem
			}
		})
	})
	for _, principals := range []int{1, 8, 64} {
		b.Run(fmt.Sprintf("fair/principals=%d", principals), func(b *testing.B) {
			b.ReportAllocs()
			s := New(Options{Capacity: capacity, Share: capacity / 2})
			keys := make([]string, principals)
			for i := range keys {
				keys[i] = fmt.Sprintf("principal:p%d", i)
			}
			var next atomic.Int64
			ctx := context.Background()
			b.RunParallel(func(pb *testing.PB) {
				key := keys[int(next.Add(1))%principals]
				for pb.Next() {
					rel, err := s.Acquire(ctx, key)
					if err != nil {
						b.Error(err)
						return
					}
					rel()
				}
			})
		})
	}
}
