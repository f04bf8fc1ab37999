package programs_test

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/isogate/isogate/internal/kv"
	"github.com/isogate/isogate/internal/programs"
)

// countingStore counts the reads of versions (keys "v/…").
type countingStore struct {
	kv.Store
	versionReads atomic.Int32
}

func (s *countingStore) Get(ctx context.Context, ns, key string) ([]byte, error) {
	if strings.HasPrefix(key, "v/") {
		s.versionReads.Add(1)
	}
	return s.Store.Get(ctx, ns, key)
}

// TestResolveReadsAVersionOnce: a version never changes once saved, so
// resolving it again (each run calling the program does) reads it from
// memory; a new version is read once too, and what is returned is the
// caller's own copy. Red without the cache: one read per resolution.
func TestResolveReadsAVersionOnce(t *testing.T) {
	s := &countingStore{Store: kv.NewMemory()}
	p := programs.New(programs.Options{Store: s, Vet: planOf{}})
	alice := caller("alice")
	save(t, p, alice, "report", "d", "return 1")
	ctx := context.Background()
	for range 3 {
		v, err := p.Resolve(ctx, alice, "report")
		if err != nil || v.Version != 1 || v.Code != "return 1" {
			t.Fatal(v, err)
		}
		v.Code = "changed by a caller"
	}
	save(t, p, alice, "report", "d", "return 2")
	for _, ref := range []string{"report", "report@2", "report@1"} {
		if v, err := p.Resolve(ctx, alice, ref); err != nil || (ref != "report@1") != (v.Code == "return 2") {
			t.Fatal(ref, v, err)
		}
	}
	if n := s.versionReads.Load(); n != 2 {
		t.Fatalf("%d reads of versions for 2 versions", n)
	}
}
