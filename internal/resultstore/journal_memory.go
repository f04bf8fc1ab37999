package resultstore

import (
	"context"
	"crypto/subtle"
	"fmt"
	"sync"
	"time"
)

// MemoryJournals is the in-process [Journals]: a paused run resumes only
// on this replica (after its in-memory run is gone, for example, never on
// another one). It holds at most maxBytes of journals; an append past that
// fails with ErrTooLarge (the run is then not durable).
type MemoryJournals struct {
	key      []byte
	maxBytes int
	now      func() time.Time

	mu      sync.Mutex
	entries map[string]*journalEntry
	bytes   int
}

type journalEntry struct {
	owner, holder, pause string
	sealedPause          string   // the pause token of the last append, which its tail seals
	sealed               [][]byte // the journal's entries, sealed in a chain
	tail                 []byte
	size                 int
	expires              time.Time
}

// NewMemoryJournals returns an in-process journal store of at most
// maxBytes, sealing entries with key (none when empty).
func NewMemoryJournals(maxBytes int, key []byte) *MemoryJournals {
	return &MemoryJournals{key: key, maxBytes: maxBytes, now: time.Now, entries: map[string]*journalEntry{}}
}

// AppendJournal implements [Journals].
func (m *MemoryJournals) AppendJournal(_ context.Context, owner, id, holder, pause string, at JournalCursor, entries [][]byte, ttl time.Duration) (JournalCursor, error) {
	sealed, next, tail := sealEntries(m.key, owner, id, pause, at, entries)
	m.mu.Lock()
	defer m.mu.Unlock()
	m.sweepLocked()
	e := m.entries[id]
	switch {
	case e != nil && e.holder != holder:
		return at, fmt.Errorf("journal %s: %w", id, ErrFenced)
	case e == nil && at.N > 0 || e != nil && len(e.sealed) != at.N:
		return at, fmt.Errorf("journal %s: not at entry %d any more (expired or dropped): %w", id, at.N, ErrNotFound)
	}
	size := sealedSize(sealed) + len(tail)
	if e != nil {
		size -= len(e.tail)
	}
	if m.bytes+size > m.maxBytes {
		return at, fmt.Errorf("%w: journals hold %d of %d bytes", ErrTooLarge, m.bytes, m.maxBytes)
	}
	if e == nil {
		e = &journalEntry{owner: owner, holder: holder}
		m.entries[id] = e
	}
	m.bytes += size
	e.size += size
	e.sealed = append(e.sealed, sealed...)
	e.tail, e.pause, e.sealedPause, e.expires = tail, pause, pause, m.now().Add(ttl)
	return next, nil
}

// ClaimJournal implements [Journals].
func (m *MemoryJournals) ClaimJournal(_ context.Context, owner, id, pause, holder string) ([][]byte, JournalCursor, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.sweepLocked()
	e := m.entries[id]
	if e == nil || e.pause == "" || subtle.ConstantTimeCompare([]byte(e.pause), []byte(pause)) != 1 ||
		subtle.ConstantTimeCompare([]byte(e.owner), []byte(owner)) != 1 {
		return nil, JournalCursor{}, fmt.Errorf("journal %s: %w", id, ErrNotFound)
	}
	entries, at, err := openEntries(m.key, owner, id, e.sealedPause, e.sealed, e.tail)
	if err != nil {
		return nil, JournalCursor{}, err
	}
	e.pause, e.holder = "", holder
	return entries, at, nil
}

// DeleteJournal implements [Journals].
func (m *MemoryJournals) DeleteJournal(_ context.Context, id, holder string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if e := m.entries[id]; e != nil && e.holder == holder {
		m.bytes -= e.size
		delete(m.entries, id)
	}
	return nil
}

// HoldsJournal implements [Journals].
func (m *MemoryJournals) HoldsJournal(_ context.Context, id, holder string) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.sweepLocked()
	e := m.entries[id]
	return e != nil && subtle.ConstantTimeCompare([]byte(e.holder), []byte(holder)) == 1, nil
}

func (m *MemoryJournals) sweepLocked() {
	now := m.now()
	for id, e := range m.entries {
		if now.After(e.expires) {
			m.bytes -= e.size
			delete(m.entries, id)
		}
	}
}
