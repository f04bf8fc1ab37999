package toolcache

import (
	"context"
	"errors"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/isogate/isogate/internal/resultstore"
	"github.com/isogate/isogate/internal/resultstore/redistest"
)

// The attack of issue 25 (6): anything that reached Redis planted a tool
// list that a replica then served (search_tools showed a planted tool).
// With store.hmac_key a planted or changed entry is refused; a genuine
// one reads back.
func TestPlantedToolListIsRefused(t *testing.T) {
	srv := redistest.ForTest(t)
	ctx := context.Background()
	c, err := NewRedis(srv.URL(), []byte("0123456789abcdef-key"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	genuine := []byte(`{"tools":[{"name":"echo"}]}`)
	if err := c.Put(ctx, "fp-1", genuine); err != nil {
		t.Fatal(err)
	}
	if got, err := c.Get(ctx, "fp-1"); err != nil || string(got) != string(genuine) {
		t.Fatalf("genuine entry: %q %v", got, err)
	}
	raw := redis.NewClient(&redis.Options{Addr: srv.Addr})
	defer raw.Close()
	sealed, _ := raw.Get(ctx, KeyPrefix+"fp-1").Result()
	for name, entry := range map[string]string{
		"planted":       `{"tools":[{"name":"exfiltrate"}]}`,
		"moved":         sealed,
		"unkeyed cache": string(resultstore.Seal(nil, KeyPrefix+"fp-2", []byte(`{"tools":[]}`))),
	} {
		if err := raw.Set(ctx, KeyPrefix+"fp-2", entry, 0).Err(); err != nil {
			t.Fatal(err)
		}
		if got, err := c.Get(ctx, "fp-2"); got != nil || !errors.Is(err, resultstore.ErrTampered) {
			t.Errorf("%s: got %q, %v; want refused", name, got, err)
		}
	}
}
