package resultstore

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"
)

// Leases keep which replica runs what (issue 35): a replica holds each
// task it runs under a lease that it renews every heartbeat; a replica that
// dies stops renewing, its leases lapse, and another replica takes the
// task over (Take is atomic: one taker). A lease carries a small sealed
// record (what the taker needs to continue or to fail the task) and lives,
// lapsed or not, until keep runs out or its holder releases it.
// Implementations are safe for concurrent use.
type Leases interface {
	// Hold starts the lease of id for holder, valid for ttl, with record
	// data kept for keep.
	Hold(ctx context.Context, id, holder string, data []byte, ttl, keep time.Duration) error
	// Renew extends holder's lease of id by ttl; it fails with ErrLeaseLost
	// when id is gone or another holder took it over.
	Renew(ctx context.Context, id, holder string, ttl time.Duration) error
	// Release drops id's lease if holder holds it (its run ended).
	Release(ctx context.Context, id, holder string) error
	// Lapsed returns up to n ids whose lease lapsed, oldest lapse first.
	Lapsed(ctx context.Context, n int) ([]string, error)
	// Take makes holder the holder of id for ttl when its lease lapsed,
	// and returns its record. Of replicas racing for one lapsed lease
	// exactly one gets it; the others get ErrNotFound (as for a lease that
	// is live, released or gone). A record failing its integrity check is
	// dropped and refused with ErrTampered.
	Take(ctx context.Context, id, holder string, ttl time.Duration) ([]byte, error)
}

// ErrLeaseLost means a lease was taken over by another replica (or is
// gone): its former holder must stop the run and write nothing more.
var ErrLeaseLost = errors.New("lease lost: another replica took the run over")

// leaseSealName is what a lease record's MAC covers besides its data.
func leaseSealName(id string) string { return "lease\x00" + id }

// MemoryLeases are the in-process [Leases]: with one replica there is
// nobody to take a run over, but a surface (and its tests) use the same
// code on both stores.
type MemoryLeases struct {
	key []byte
	now func() time.Time

	mu     sync.Mutex
	leases map[string]*memoryLease
}

type memoryLease struct {
	holder        string
	data          []byte
	until, expire time.Time
}

// NewMemoryLeases returns an empty in-process lease table sealing records
// with key (none when empty); now reads the clock (nil: time.Now).
func NewMemoryLeases(key []byte, now func() time.Time) *MemoryLeases {
	if now == nil {
		now = time.Now
	}
	return &MemoryLeases{key: key, now: now, leases: map[string]*memoryLease{}}
}

func (m *MemoryLeases) sweepLocked(now time.Time) {
	for id, l := range m.leases {
		if !now.Before(l.expire) {
			delete(m.leases, id)
		}
	}
}

// Hold implements [Leases].
func (m *MemoryLeases) Hold(_ context.Context, id, holder string, data []byte, ttl, keep time.Duration) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.now()
	m.sweepLocked(now)
	m.leases[id] = &memoryLease{holder: holder, data: Seal(m.key, leaseSealName(id), data),
		until: now.Add(ttl), expire: now.Add(keep)}
	return nil
}

// Renew implements [Leases].
func (m *MemoryLeases) Renew(_ context.Context, id, holder string, ttl time.Duration) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	l := m.leases[id]
	if l == nil || l.holder != holder {
		return fmt.Errorf("lease %s: %w", id, ErrLeaseLost)
	}
	l.until = m.now().Add(ttl)
	return nil
}

// Release implements [Leases].
func (m *MemoryLeases) Release(_ context.Context, id, holder string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if l := m.leases[id]; l != nil && l.holder == holder {
		delete(m.leases, id)
	}
	return nil
}

// Lapsed implements [Leases].
func (m *MemoryLeases) Lapsed(_ context.Context, n int) ([]string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.now()
	m.sweepLocked(now)
	type lapsed struct {
		id    string
		until time.Time
	}
	var out []lapsed
	for id, l := range m.leases {
		if !now.Before(l.until) {
			out = append(out, lapsed{id, l.until})
		}
	}
	slices.SortFunc(out, func(a, b lapsed) int { return a.until.Compare(b.until) })
	ids := []string{}
	for _, l := range out[:min(n, len(out))] {
		ids = append(ids, l.id)
	}
	return ids, nil
}

// Take implements [Leases].
func (m *MemoryLeases) Take(_ context.Context, id, holder string, ttl time.Duration) ([]byte, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.now()
	m.sweepLocked(now)
	l := m.leases[id]
	if l == nil || now.Before(l.until) {
		return nil, fmt.Errorf("lease %s: %w", id, ErrNotFound)
	}
	data, err := Unseal(m.key, leaseSealName(id), l.data)
	if err != nil {
		delete(m.leases, id)
		return nil, err
	}
	l.holder, l.until = holder, now.Add(ttl)
	return data, nil
}
