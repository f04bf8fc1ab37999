package resultstore

import (
	"container/list"
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"fmt"
	"sync"
	"time"
)

// Memory is the in-process [Store]. Entries expire Limits.TTL after they
// were stored (reads do not extend this).
//
// Each account (the principal of the owner, see [AccountOf]) has a share
// (Limits.OwnerBytes) that all its owners (its sessions) use together:
// storing more than its share evicts that account's own oldest entries. A
// Put never evicts another account's live entries: when the whole store is
// full of them it fails with [ErrFull], so one caller, however many
// sessions it opens, cannot push another's results out before their TTL.
type Memory struct {
	limits Limits
	now    func() time.Time
	newID  func() string

	mu        sync.Mutex
	byID      map[string]*list.Element // of *entry
	order     *list.List               // oldest first
	bytes     int
	byAccount map[string]*accountUsage
}

type entry struct {
	id, owner, account string
	data               []byte
	at                 time.Time
	accountEl          *list.Element // in accountUsage.order
}

type accountUsage struct {
	bytes int
	order *list.List // of *list.Element in Memory.order, oldest first
}

// MemoryOption configures a Memory store.
type MemoryOption func(*Memory)

// WithClock makes the store read the time from now instead of time.Now, so
// tests can move time forward without sleeping.
func WithClock(now func() time.Time) MemoryOption {
	return func(m *Memory) {
		if now != nil {
			m.now = now
		}
	}
}

// WithIDs makes the store draw ids from newID instead of crypto/rand (tests
// use it to force collisions).
func WithIDs(newID func() string) MemoryOption {
	return func(m *Memory) {
		if newID != nil {
			m.newID = newID
		}
	}
}

// NewMemory returns an empty in-memory store; zero limits take defaults.
func NewMemory(limits Limits, opts ...MemoryOption) *Memory {
	m := &Memory{
		limits:    limits.WithDefaults(),
		now:       time.Now,
		newID:     randomID,
		byID:      map[string]*list.Element{},
		order:     list.New(),
		byAccount: map[string]*accountUsage{},
	}
	for _, o := range opts {
		o(m)
	}
	return m
}

// randomID returns 32 hex characters (128 bits) from crypto/rand.
func randomID() string {
	var b [16]byte
	rand.Read(b[:]) // never fails (crashes the program instead) since Go 1.24
	return hex.EncodeToString(b[:])
}

// Limits implements [Store].
func (m *Memory) Limits() Limits { return m.limits }

// Put implements [Store]. The data is copied.
func (m *Memory) Put(_ context.Context, owner string, data []byte) (string, error) {
	if len(data) > m.limits.OwnerBytes {
		return "", fmt.Errorf("%w: %d bytes, share %d bytes", ErrTooLarge, len(data), m.limits.OwnerBytes)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.expireLocked()
	account := AccountOf(owner)
	u := m.byAccount[account]
	if u == nil {
		u = &accountUsage{order: list.New()}
	}
	// Make room from this account's own entries only: first for its share,
	// then for the total when others fill the rest.
	for u.order.Len() > 0 && (u.bytes+len(data) > m.limits.OwnerBytes || m.bytes+len(data) > m.limits.MaxBytes) {
		m.removeLocked(u.order.Front().Value.(*list.Element))
	}
	if m.bytes+len(data) > m.limits.MaxBytes {
		return "", fmt.Errorf("%w: %d of %d bytes held by other callers' results until they expire",
			ErrFull, m.bytes, m.limits.MaxBytes)
	}
	m.byAccount[account] = u // removeLocked drops accounts left with nothing
	id := m.newID()
	for m.byID[id] != nil {
		id = m.newID()
	}
	e := &entry{id: id, owner: owner, account: account, data: append([]byte(nil), data...), at: m.now()}
	el := m.order.PushBack(e)
	e.accountEl = u.order.PushBack(el)
	m.byID[id] = el
	m.bytes += len(data)
	u.bytes += len(data)
	return id, nil
}

// Get implements [Store]. The returned slice must not be modified.
func (m *Memory) Get(_ context.Context, owner, id string) ([]byte, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.expireLocked()
	el, ok := m.byID[id]
	if !ok {
		return nil, fmt.Errorf("%w: %s", ErrNotFound, id)
	}
	e := el.Value.(*entry)
	if m.now().Sub(e.at) >= m.limits.TTL { // behind a younger entry if the clock went back
		m.removeLocked(el)
		return nil, fmt.Errorf("%w: %s", ErrNotFound, id)
	}
	if subtle.ConstantTimeCompare([]byte(e.owner), []byte(owner)) != 1 {
		return nil, fmt.Errorf("%w: %s", ErrNotFound, id)
	}
	return e.data, nil
}

// Len reports how many unexpired entries the store holds.
func (m *Memory) Len() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.expireLocked()
	return m.order.Len()
}

// Bytes reports the total size of the unexpired entries, and of those of
// owner's account (all its owners').
func (m *Memory) Bytes(owner string) (total, ofAccount int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.expireLocked()
	if u := m.byAccount[AccountOf(owner)]; u != nil {
		ofAccount = u.bytes
	}
	return m.bytes, ofAccount
}

// expireLocked drops entries at least TTL old. Entries are kept in insertion
// order, so it stops at the first live one; Get re-checks the entry it finds
// in case a clock that went backwards left an expired entry behind it.
func (m *Memory) expireLocked() {
	now := m.now()
	for el := m.order.Front(); el != nil; el = m.order.Front() {
		if now.Sub(el.Value.(*entry).at) < m.limits.TTL {
			return
		}
		m.removeLocked(el)
	}
}

func (m *Memory) removeLocked(el *list.Element) {
	e := m.order.Remove(el).(*entry)
	delete(m.byID, e.id)
	m.bytes -= len(e.data)
	u := m.byAccount[e.account]
	u.order.Remove(e.accountEl)
	u.bytes -= len(e.data)
	if u.order.Len() == 0 {
		delete(m.byAccount, e.account)
	}
}
