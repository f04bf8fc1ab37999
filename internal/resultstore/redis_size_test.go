package resultstore_test

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/isogate/isogate/internal/resultstore"
	"github.com/isogate/isogate/internal/resultstore/redistest"
)

// usedMemory is redis-server's INFO memory used_memory.
func usedMemory(t testing.TB, c *redis.Client) int64 {
	t.Helper()
	info, err := c.Info(context.Background(), "memory").Result()
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(info, "\r\n") {
		if v, ok := strings.CutPrefix(line, "used_memory:"); ok {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
	}
	t.Fatal("no used_memory in INFO memory")
	return 0
}

// The Redis store's byte count is what its entries really take in Redis
// (INFO memory's used_memory), bookkeeping included, not their data alone:
// a byte cap on it bounds Redis's memory. Seen red while the count was the
// data's length alone (counted 1.0 MB for 1.9 MB held).
func TestRedisBudgetIsWhatItHolds(t *testing.T) {
	srv := redistest.ForTest(t) // a server of its own: nothing else writes to it
	ctx := context.Background()
	c := redis.NewClient(&redis.Options{Addr: srv.Addr})
	defer c.Close()
	for _, size := range []int{200, 1000, 4000} {
		t.Run(fmt.Sprint(size), func(t *testing.T) {
			s, err := resultstore.NewRedis(resultstore.RedisOptions{URL: srv.URL(), Prefix: resultstore.RedisKeyPrefix + fmt.Sprintf("runs%d:", size),
				Limits: resultstore.Limits{TTL: time.Hour, MaxBytes: 1 << 30}, HMACKey: []byte("k")})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			data := []byte(strings.Repeat("x", size))
			before := usedMemory(t, c)
			const n = 1000
			for i := range n {
				owner := resultstore.OwnerKey(fmt.Sprintf("principal:user%d", i%8), fmt.Sprintf("session-%04d", i%64))
				if _, err := s.Put(ctx, owner, data); err != nil {
					t.Fatal(err)
				}
			}
			held := usedMemory(t, c) - before
			counted, err := s.Bytes(ctx)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%d entries of %d bytes: Redis holds %d bytes (%d an entry), the store counts %d (%d an entry)",
				n, size, held, held/n, counted, counted/n)
			if counted < held*9/10 || counted > held*3/2 {
				t.Fatalf("the store counts %d bytes for the %d Redis holds: want within -10%%..+50%%", counted, held)
			}
		})
	}
}
