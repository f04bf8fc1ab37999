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
// another one). It holds at most maxBytes of journals; a save past that
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
	data                 []byte
	expires              time.Time
}

// NewMemoryJournals returns an in-process journal store of at most
// maxBytes, sealing entries with key (none when empty).
func NewMemoryJournals(maxBytes int, key []byte) *MemoryJournals {
	return &MemoryJournals{key: key, maxBytes: maxBytes, now: time.Now, entries: map[string]*journalEntry{}}
}

// SaveJournal implements [Journals].
func (m *MemoryJournals) SaveJournal(_ context.Context, owner, id, holder, pause string, data []byte, ttl time.Duration) error {
	sealed := Seal(m.key, journalSealName(owner, id), data)
	m.mu.Lock()
	defer m.mu.Unlock()
	m.sweepLocked()
	old := m.entries[id]
	if old != nil && old.holder != holder {
		return fmt.Errorf("journal %s: %w", id, ErrFenced)
	}
	size := len(sealed)
	if old != nil {
		size -= len(old.data)
	}
	if m.bytes+size > m.maxBytes {
		return fmt.Errorf("%w: journals hold %d of %d bytes", ErrTooLarge, m.bytes, m.maxBytes)
	}
	m.bytes += size
	m.entries[id] = &journalEntry{owner: owner, holder: holder, pause: pause, data: sealed, expires: m.now().Add(ttl)}
	return nil
}

// ClaimJournal implements [Journals].
func (m *MemoryJournals) ClaimJournal(_ context.Context, owner, id, pause, holder string) ([]byte, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.sweepLocked()
	e := m.entries[id]
	if e == nil || e.pause == "" || subtle.ConstantTimeCompare([]byte(e.pause), []byte(pause)) != 1 ||
		subtle.ConstantTimeCompare([]byte(e.owner), []byte(owner)) != 1 {
		return nil, fmt.Errorf("journal %s: %w", id, ErrNotFound)
	}
	data, err := Unseal(m.key, journalSealName(owner, id), e.data)
	if err != nil {
		return nil, err
	}
	e.pause, e.holder = "", holder
	return data, nil
}

// DeleteJournal implements [Journals].
func (m *MemoryJournals) DeleteJournal(_ context.Context, id, holder string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if e := m.entries[id]; e != nil && e.holder == holder {
		m.bytes -= len(e.data)
		delete(m.entries, id)
	}
	return nil
}

func (m *MemoryJournals) sweepLocked() {
	now := m.now()
	for id, e := range m.entries {
		if now.After(e.expires) {
			m.bytes -= len(e.data)
			delete(m.entries, id)
		}
	}
}
