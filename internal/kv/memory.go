package kv

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"
)

// Memory is a [Store] in process memory: nothing outlives the process.
// Expired entries are dropped when they are next touched or listed.
type Memory struct {
	mu     sync.Mutex
	ns     map[string]map[string]memEntry
	closed bool
	now    func() time.Time
}

type memEntry struct {
	value   []byte
	expires time.Time // zero: never
}

// NewMemory returns an empty in-memory store.
func NewMemory() *Memory {
	return &Memory{ns: map[string]map[string]memEntry{}, now: time.Now}
}

// live returns the entry of key if it exists and has not expired; it drops
// an expired one. The caller holds m.mu.
func (m *Memory) live(ns, key string) (memEntry, bool) {
	e, ok := m.ns[ns][key]
	if ok && !e.expires.IsZero() && !m.now().Before(e.expires) {
		delete(m.ns[ns], key)
		return memEntry{}, false
	}
	return e, ok
}

func (m *Memory) open() error {
	if m.closed {
		return fmt.Errorf("memory store closed: %w", ErrUnavailable)
	}
	return nil
}

// Get implements [Store].
func (m *Memory) Get(_ context.Context, ns, key string) ([]byte, error) {
	if err := check(ns, key); err != nil {
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.open(); err != nil {
		return nil, err
	}
	e, ok := m.live(ns, key)
	if !ok {
		return nil, fmt.Errorf("%s/%s: %w", ns, key, ErrNotFound)
	}
	return slices.Clone(e.value), nil
}

// Put implements [Store].
func (m *Memory) Put(_ context.Context, ns, key string, value []byte, ttl time.Duration) error {
	if err := check(ns, key); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.open(); err != nil {
		return err
	}
	m.set(ns, Change{Key: key, Value: value, TTL: ttl})
	return nil
}

// set applies one change; the caller holds m.mu.
func (m *Memory) set(ns string, c Change) {
	if c.Delete {
		delete(m.ns[ns], c.Key)
		return
	}
	if m.ns[ns] == nil {
		m.ns[ns] = map[string]memEntry{}
	}
	e := memEntry{value: slices.Clone(c.Value)}
	if c.TTL > 0 {
		e.expires = m.now().Add(c.TTL)
	}
	m.ns[ns][c.Key] = e
}

// Delete implements [Store].
func (m *Memory) Delete(_ context.Context, ns, key string) error {
	if err := check(ns, key); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.open(); err != nil {
		return err
	}
	delete(m.ns[ns], key)
	return nil
}

// List implements [Store].
func (m *Memory) List(_ context.Context, ns string, o ListOptions) ([]Entry, error) {
	if err := check(ns); err != nil {
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.open(); err != nil {
		return nil, err
	}
	var keys []string
	for k := range m.ns[ns] {
		if o.keeps(k) {
			if _, ok := m.live(ns, k); ok {
				keys = append(keys, k)
			}
		}
	}
	slices.Sort(keys)
	if n := o.limit(); len(keys) > n {
		keys = keys[:n]
	}
	out := make([]Entry, len(keys))
	for i, k := range keys {
		out[i] = Entry{Key: k, Value: slices.Clone(m.ns[ns][k].value)}
	}
	return out, nil
}

// Update implements [Store].
func (m *Memory) Update(_ context.Context, ns string, keys []string, fn func(map[string][]byte) ([]Change, error)) error {
	if err := check(ns, keys...); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.open(); err != nil {
		return err
	}
	cur := map[string][]byte{}
	for _, k := range keys {
		if e, ok := m.live(ns, k); ok {
			cur[k] = slices.Clone(e.value)
		}
	}
	changes, err := decide(fn, keys, cur)
	if err != nil {
		return err
	}
	for _, c := range changes {
		m.set(ns, c)
	}
	return nil
}

// Close implements [Store]; later calls fail with [ErrUnavailable].
func (m *Memory) Close() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.closed = true
	return nil
}
