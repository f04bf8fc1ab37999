// Package kv is a small durable key-value store with namespaces: what the
// gateway keeps beyond a process's life (saved programs, programs' own
// state). Three implementations share one contract: [Bolt], an embedded
// bbolt file in a data directory (one machine; the default), [Redis]
// (every replica that points at one server sees the same data) and
// [Memory] (tests, and a process that keeps nothing).
//
// A store that cannot answer (its file held by another process or closed,
// its server unreachable) fails with an error wrapping [ErrUnavailable],
// which callers turn into a typed, retryable refusal: they never carry on
// as if the key were absent.
package kv

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"
)

// Store is a namespaced key-value store. Namespaces and keys are
// non-empty strings without NUL bytes; values are opaque bytes. An entry
// whose TTL has passed is absent for every method, whether or not it has
// been cleaned up yet.
type Store interface {
	// Get returns the value of key in ns, or an error wrapping
	// [ErrNotFound].
	Get(ctx context.Context, ns, key string) ([]byte, error)
	// Put sets key in ns to value. A TTL > 0 makes the entry expire that
	// long from now; 0 keeps it until it is deleted.
	Put(ctx context.Context, ns, key string, value []byte, ttl time.Duration) error
	// Delete removes key from ns; deleting an absent key is not an error.
	Delete(ctx context.Context, ns, key string) error
	// List returns the entries of ns whose keys start with o.Prefix and
	// sort after o.After, in byte order of their keys, at most o.Limit of
	// them (see [ListOptions]).
	List(ctx context.Context, ns string, o ListOptions) ([]Entry, error)
	// Update reads keys of ns and applies what fn returns, atomically: no
	// other write to those keys comes between the read and the writes.
	// fn receives the keys that exist (absent ones are missing from the
	// map) and may be called more than once (a concurrent write to one of
	// the keys makes the store read them again); its changes may touch only
	// keys. An error from fn is returned as it is and nothing is written.
	Update(ctx context.Context, ns string, keys []string, fn func(cur map[string][]byte) ([]Change, error)) error
	// Close releases the store.
	Close() error
}

// Entry is one key and its value.
type Entry struct {
	Key   string
	Value []byte
}

// Change is one write of an [Store.Update]: Delete removes Key, otherwise
// Key is set to Value with TTL (0: no expiry).
type Change struct {
	Key    string
	Value  []byte
	TTL    time.Duration
	Delete bool
}

// ListOptions bound a [Store.List]. The zero value lists the first
// DefaultListLimit keys of the namespace.
type ListOptions struct {
	// Prefix keeps keys that start with it.
	Prefix string
	// After keeps keys that sort after it (the last key of the previous
	// page).
	After string
	// Limit is the most entries returned: 0 means DefaultListLimit, and
	// it is capped at MaxListLimit.
	Limit int
}

const (
	// DefaultListLimit is how many entries a List returns when its
	// options name no limit.
	DefaultListLimit = 100
	// MaxListLimit is the most entries one List returns.
	MaxListLimit = 10000
)

// limit is o.Limit with its default and cap.
func (o ListOptions) limit() int {
	switch {
	case o.Limit <= 0:
		return DefaultListLimit
	case o.Limit > MaxListLimit:
		return MaxListLimit
	}
	return o.Limit
}

// keeps reports whether key belongs to the listing o describes.
func (o ListOptions) keeps(key string) bool {
	return strings.HasPrefix(key, o.Prefix) && key > o.After
}

var (
	// ErrNotFound means the key is absent (never set, deleted or expired).
	ErrNotFound = errors.New("not found")
	// ErrUnavailable means the store could not answer: retry later. It is
	// never a sign that a key is absent.
	ErrUnavailable = errors.New("store unavailable")
	// ErrConflict means an Update lost to concurrent writes of its keys
	// too many times in a row; retryable.
	ErrConflict = errors.New("update kept conflicting with concurrent writes")
	// ErrInvalid means a namespace or key is empty or holds a NUL byte, or
	// a Change names a key its Update did not read.
	ErrInvalid = errors.New("invalid namespace or key")
	// ErrHeld means a bbolt file is locked by another process (a running
	// gateway on the same data directory): waiting a few seconds does not
	// help while that process runs. It is also ErrUnavailable.
	ErrHeld = fmt.Errorf("%w: its file is locked by another process", ErrUnavailable)
)

// maxUpdateTries bounds the optimistic retries of an Update.
const maxUpdateTries = 64

// check validates a namespace and keys.
func check(ns string, keys ...string) error {
	if ns == "" || strings.IndexByte(ns, 0) >= 0 {
		return fmt.Errorf("%w: namespace %q", ErrInvalid, ns)
	}
	for _, k := range keys {
		if k == "" || strings.IndexByte(k, 0) >= 0 {
			return fmt.Errorf("%w: key %q", ErrInvalid, k)
		}
	}
	return nil
}

// decide asks an update's fn for its changes to cur, the values read of
// keys, and refuses a change to a key that was not read.
func decide(fn func(map[string][]byte) ([]Change, error), keys []string, cur map[string][]byte) ([]Change, error) {
	changes, err := fn(cur)
	if err != nil {
		return nil, err
	}
	for _, c := range changes {
		if !slices.Contains(keys, c.Key) {
			return nil, fmt.Errorf("%w: change to key %q that the update did not read", ErrInvalid, c.Key)
		}
	}
	return changes, nil
}

// Lazy is a [Store] opened on its first use (and again after a failed
// open), so that a gateway that never needs the store never creates its
// file: every method fails with an error wrapping [ErrUnavailable] while
// open fails.
type Lazy struct {
	open   func() (Store, error)
	exists func() bool
	mu     sync.Mutex
	s      Store
	// failed is the last open's error and when it came: for
	// reopenAfter, every use answers it at once instead of waiting for
	// another open (a bbolt file another process holds costs its whole
	// open timeout, with mu held).
	failed   error
	failedAt time.Time
	now      func() time.Time // time.Now; tests set it
}

// reopenAfter is how long a failed open is answered from memory before
// the store is opened again.
const reopenAfter = 5 * time.Second

// NewLazy returns a store that calls open on first use. When exists is
// given and reports false, reads (Get, List) answer as an empty store
// without opening it: only a write creates it.
func NewLazy(open func() (Store, error), exists func() bool) *Lazy {
	return &Lazy{open: open, exists: exists}
}

// absent reports whether a read may answer as an empty store.
func (l *Lazy) absent() bool {
	l.mu.Lock()
	opened := l.s != nil
	l.mu.Unlock()
	return !opened && l.exists != nil && !l.exists()
}

func (l *Lazy) store() (Store, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.s != nil {
		return l.s, nil
	}
	now := time.Now
	if l.now != nil {
		now = l.now
	}
	if l.failed != nil && now().Sub(l.failedAt) < reopenAfter {
		return nil, l.failed
	}
	s, err := l.open()
	if err != nil {
		if !errors.Is(err, ErrUnavailable) {
			err = fmt.Errorf("%w (%w)", err, ErrUnavailable)
		}
		l.failed, l.failedAt = err, now()
		return nil, err
	}
	l.s, l.failed = s, nil
	return s, nil
}

// Get implements [Store].
func (l *Lazy) Get(ctx context.Context, ns, key string) ([]byte, error) {
	if l.absent() {
		return nil, fmt.Errorf("%s/%s: %w", ns, key, ErrNotFound)
	}
	s, err := l.store()
	if err != nil {
		return nil, err
	}
	return s.Get(ctx, ns, key)
}

// Put implements [Store].
func (l *Lazy) Put(ctx context.Context, ns, key string, value []byte, ttl time.Duration) error {
	s, err := l.store()
	if err != nil {
		return err
	}
	return s.Put(ctx, ns, key, value, ttl)
}

// Delete implements [Store].
func (l *Lazy) Delete(ctx context.Context, ns, key string) error {
	s, err := l.store()
	if err != nil {
		return err
	}
	return s.Delete(ctx, ns, key)
}

// List implements [Store].
func (l *Lazy) List(ctx context.Context, ns string, o ListOptions) ([]Entry, error) {
	if l.absent() {
		return nil, nil
	}
	s, err := l.store()
	if err != nil {
		return nil, err
	}
	return s.List(ctx, ns, o)
}

// Update implements [Store].
func (l *Lazy) Update(ctx context.Context, ns string, keys []string, fn func(map[string][]byte) ([]Change, error)) error {
	s, err := l.store()
	if err != nil {
		return err
	}
	return s.Update(ctx, ns, keys, fn)
}

// Close implements [Store]: it closes the store if it was opened.
func (l *Lazy) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.s == nil {
		return nil
	}
	err := l.s.Close()
	l.s = nil
	return err
}
