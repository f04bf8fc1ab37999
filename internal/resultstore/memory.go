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
//
// The budgets count what an entry really holds in the Go heap: the
// allocation of its copy of the data (rounded up to the allocator's size
// class), its id and a fixed cost for its bookkeeping ([EntryOverhead]), so
// that a store of many small entries (run records) stays within its budget.
type Memory struct {
	limits   Limits
	now      func() time.Time
	newID    func() string
	overhead int // charged per entry beyond its data and id
	onFull   func()

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
	cost               int           // what the entry is charged, see Memory
}

// EntryOverhead is what a [Memory] store charges each entry beyond its data
// and its id: the entry itself (112 bytes with the allocator's rounding),
// its two list elements (48 each) and its slot in the id index (a map of
// string to pointer: 24 bytes a slot, at most 7 of 8 slots used and the
// table doubled when full, about 48 bytes an entry on average, more just
// after it grew). Measured by TestMemoryBudgetIsWhatItHolds.
const EntryOverhead = 112 + 2*48 + 64

// entryCost is what an entry holding held (its copy of the data) under id
// is charged: the copy's capacity (append rounds it up to the allocator's
// size class), the id and the bookkeeping; with CountDataOnly the data's
// length alone.
func (m *Memory) entryCost(held []byte, id string) int {
	if m.overhead == 0 {
		return len(held)
	}
	return cap(held) + len(id) + m.overhead
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

// CountDataOnly makes the store charge entries their data's length alone,
// not what they hold in memory (tests of exact byte budgets use it).
func CountDataOnly() MemoryOption {
	return func(m *Memory) { m.overhead = 0 }
}

// WithOnFull makes the store call onFull each time it refuses an entry
// with [ErrFull] (a metric counts them).
func WithOnFull(onFull func()) MemoryOption {
	return func(m *Memory) { m.onFull = onFull }
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
		overhead:  EntryOverhead,
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
	id := m.newID()
	held := append([]byte(nil), data...)
	size := m.entryCost(held, id)
	if size > m.limits.OwnerBytes {
		return "", fmt.Errorf("%w: %d bytes (%d with the store's bookkeeping), share %d bytes",
			ErrTooLarge, len(data), size, m.limits.OwnerBytes)
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
	for u.order.Len() > 0 && (u.bytes+size > m.limits.OwnerBytes || m.bytes+size > m.limits.MaxBytes) {
		m.removeLocked(u.order.Front().Value.(*list.Element))
	}
	if m.bytes+size > m.limits.MaxBytes {
		if m.onFull != nil {
			m.onFull()
		}
		return "", fmt.Errorf("%w: %d of %d bytes held by other callers' results until they expire",
			ErrFull, m.bytes, m.limits.MaxBytes)
	}
	m.byAccount[account] = u // removeLocked drops accounts left with nothing
	for m.byID[id] != nil {
		id = m.newID() // ids are as long as the one charged
	}
	e := &entry{id: id, owner: owner, account: account, data: held, at: m.now(), cost: size}
	el := m.order.PushBack(e)
	e.accountEl = u.order.PushBack(el)
	m.byID[id] = el
	m.bytes += size
	u.bytes += size
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

// Bytes reports what the unexpired entries are charged (see [Memory]) in
// all, and those of owner's account (all its owners').
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
	m.bytes -= e.cost
	u := m.byAccount[e.account]
	u.order.Remove(e.accountEl)
	u.bytes -= e.cost
	if u.order.Len() == 0 {
		delete(m.byAccount, e.account)
	}
}
