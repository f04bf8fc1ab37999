package resultstore

import "context"

// LeaseChecker is implemented by the lease tables: whether a task has a
// lease at all (held, or lapsed and not taken over yet). A task with none
// is run by no replica that a takeover could find (issue 44: every task
// ends).
type LeaseChecker interface {
	// Leased reports whether id has a lease.
	Leased(ctx context.Context, id string) (bool, error)
}

// Leased implements [LeaseChecker].
func (m *MemoryLeases) Leased(_ context.Context, id string) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.sweepLocked(m.now())
	_, ok := m.leases[id]
	return ok, nil
}

// Leased implements [LeaseChecker].
func (r *RedisLeases) Leased(ctx context.Context, id string) (bool, error) {
	n, err := r.client.Exists(ctx, r.LeaseKey(id)).Result()
	if err != nil {
		return false, r.wrap(err)
	}
	return n == 1, nil
}
