// Package state is programs' own key-value store (issue 45): what a
// program keeps between its runs with state.get, state.set, state.delete
// and state.list. Each principal has a store of its own, bounded by quotas
// (keys, bytes) and with an optional time to live per key, kept in a
// [kv.Store] (the embedded bbolt file, or Redis shared by every replica).
//
// A principal's keys live in a namespace of their own ([Namespace]): a key
// is opaque data inside it, so no key name ("../bob/x", "k:", a prefix of
// another principal's name) reaches another principal's keys. Beside the
// keys the namespace holds one usage record (how many keys and bytes, and
// when the keys that expire do), updated atomically with every write so
// that two replicas writing at once never pass a quota.
//
// Expiry follows this package's clock ([Options].Now): a key whose time
// has passed is absent to every read and counts for nothing, whether or
// not the store has removed it yet.
package state

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/isogate/isogate/config"
	"github.com/isogate/isogate/internal/authn"
	"github.com/isogate/isogate/internal/kv"
	"github.com/isogate/isogate/v8sandbox"
)

// The error codes a program's state call fails with (e.code).
const (
	// CodeQuotaExceeded: the write would take the principal's state past
	// state.max_keys or state.max_bytes; nothing was written.
	CodeQuotaExceeded v8sandbox.Code = "STATE_QUOTA_EXCEEDED"
	// CodeInvalid: a key, value or option that cannot be stored as given
	// (the message says which and why); nothing was written.
	CodeInvalid v8sandbox.Code = "STATE_INVALID"
	// CodeUnavailable: the store did not answer (its file held by another
	// process, Redis down); retryable. A read never answers "absent"
	// instead. The same code as saved programs' (programs.CodeStoreUnavailable).
	CodeUnavailable v8sandbox.Code = "STORE_UNAVAILABLE"
)

const (
	// DefaultMaxKeys is how many keys one principal may keep
	// (state.max_keys).
	DefaultMaxKeys = config.DefaultStateMaxKeys
	// DefaultMaxBytes bounds the bytes of one principal's keys and values
	// (their JSON) together (state.max_bytes).
	DefaultMaxBytes = config.DefaultStateMaxBytes
	// MaxKeyBytes bounds a key.
	MaxKeyBytes = 256
	// DefaultListLimit is how many keys state.list returns without a limit.
	DefaultListLimit = 100
	// MaxListLimit is the most keys one state.list returns.
	MaxListLimit = 1000
)

// NamespacePrefix starts the store namespace of each principal's state.
const NamespacePrefix = "state/"

// Namespace is the store namespace of owner's state.
func Namespace(owner string) string { return NamespacePrefix + owner }

// LocalOwner owns the state of programs run on a gateway without
// authentication (one local user), as it owns their saved programs.
const LocalOwner = "local"

// Owner is the principal whose state a call in ctx reaches.
func Owner(ctx context.Context) string {
	if p := authn.FromContext(ctx); p != nil {
		return p.Name
	}
	return LocalOwner
}

// Keys inside a namespace: the entries under entryPrefix, and the usage
// record.
const (
	entryPrefix = "k:"
	usageKey    = "u"
)

// Options configure a [State]; zero fields take defaults.
type Options struct {
	// Store keeps the state. Required.
	Store kv.Store
	// MaxKeys is how many keys a principal may keep; default
	// DefaultMaxKeys.
	MaxKeys int
	// MaxBytes bounds a principal's keys and values together; default
	// DefaultMaxBytes.
	MaxBytes int
	// MaxTTL, when > 0, is the longest a key lives (state.max_ttl): a key
	// set without a TTL, or with a longer one, expires that long after it
	// is set. 0: a key without a TTL is kept until it is deleted.
	MaxTTL time.Duration
	// Now is the clock expiry follows; default time.Now.
	Now func() time.Time
	// OnRefused, when set, is told of each write refused at a quota
	// (metrics: isogate_store_refusals_total{store="state"}).
	OnRefused func()
}

// State serves programs' state calls. It is safe for concurrent use.
type State struct {
	o Options
}

// New returns the state kept in o.Store.
func New(o Options) (*State, error) {
	if o.Store == nil {
		return nil, errors.New("state: no store")
	}
	if o.MaxKeys <= 0 {
		o.MaxKeys = DefaultMaxKeys
	}
	if o.MaxBytes <= 0 {
		o.MaxBytes = DefaultMaxBytes
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return &State{o: o}, nil
}

// entry is a stored value: its JSON and when it expires (Unix
// milliseconds; 0: never).
type entry struct {
	V json.RawMessage `json:"v"`
	E int64           `json:"e,omitempty"`
}

// usage is a principal's usage record: keys, bytes (each key's length
// plus its value's), and the keys that expire with their size and expiry.
type usage struct {
	Keys     int                 `json:"n"`
	Bytes    int                 `json:"b"`
	Expiring map[string][2]int64 `json:"x,omitempty"` // key → [size, expiry ms]
}

// prune drops from u the keys expired at now.
func (u *usage) prune(now int64) {
	for k, x := range u.Expiring {
		if x[1] <= now {
			u.Keys--
			u.Bytes -= int(x[0])
			delete(u.Expiring, k)
		}
	}
}

// live decodes a stored entry, nil when it is absent or expired at now.
func live(raw []byte, ok bool, now int64) (*entry, error) {
	if !ok {
		return nil, nil
	}
	var e entry
	if err := json.Unmarshal(raw, &e); err != nil {
		return nil, fmt.Errorf("a stored state entry does not decode: %w (%w)", err, kv.ErrUnavailable)
	}
	if e.E != 0 && e.E <= now {
		return nil, nil
	}
	return &e, nil
}

func (s *State) nowMS() int64 { return s.o.Now().UnixMilli() }

// checkKey refuses a key that is empty, too long, not UTF-8 or holds a
// control character.
func checkKey(key string) error {
	switch {
	case key == "":
		return invalid("a key must not be empty")
	case len(key) > MaxKeyBytes:
		return invalid("a key has at most %d bytes; this one has %d", MaxKeyBytes, len(key))
	case !utf8.ValidString(key):
		return invalid("a key must be valid UTF-8")
	case strings.IndexFunc(key, func(r rune) bool { return r < 0x20 || r == 0x7f }) >= 0:
		return invalid("a key must not hold control characters")
	}
	return nil
}

func invalid(format string, args ...any) error {
	return &v8sandbox.HostError{Code: CodeInvalid, Message: string(CodeInvalid) + ": " + fmt.Sprintf(format, args...)}
}

// failure turns a store error of op into the error a program sees.
func failure(op string, err error) error {
	var he *v8sandbox.HostError
	switch {
	case errors.As(err, &he):
		return err
	case errors.Is(err, kv.ErrInvalid):
		return invalid("state.%s: %v", op, err)
	}
	// Unavailable, a lost race with other writers, or anything else: fail
	// closed, retryable, never as if the key were absent.
	return &v8sandbox.HostError{Code: CodeUnavailable,
		Message: fmt.Sprintf("%s: state.%s: the state store did not answer (%v); nothing was read or written, try again later", CodeUnavailable, op, err)}
}

// Get returns owner's value of key; ok is false when it is absent or
// expired.
func (s *State) Get(ctx context.Context, owner, key string) (value json.RawMessage, ok bool, err error) {
	if err := checkKey(key); err != nil {
		return nil, false, err
	}
	raw, err := s.o.Store.Get(ctx, Namespace(owner), entryPrefix+key)
	if errors.Is(err, kv.ErrNotFound) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, failure("get", err)
	}
	e, err := live(raw, true, s.nowMS())
	if err != nil || e == nil {
		return nil, false, failureOrNil("get", err)
	}
	return e.V, true, nil
}

func failureOrNil(op string, err error) error {
	if err == nil {
		return nil
	}
	return failure(op, err)
}

// Set sets owner's key to value (JSON), expiring ttl from now (0: never,
// unless Options.MaxTTL says otherwise). A write that would pass a quota
// fails with CodeQuotaExceeded and changes nothing.
func (s *State) Set(ctx context.Context, owner, key string, value json.RawMessage, ttl time.Duration) error {
	if err := checkKey(key); err != nil {
		return err
	}
	if len(value) == 0 || !json.Valid(value) {
		return invalid("state.set(%q, value): the value must be JSON data (use state.delete to remove a key)", key)
	}
	if ttl < 0 {
		return invalid("state.set(%q): ttl must be a positive number of seconds", key)
	}
	if s.o.MaxTTL > 0 && (ttl == 0 || ttl > s.o.MaxTTL) {
		ttl = s.o.MaxTTL
	}
	size := len(key) + len(value)
	if size > s.o.MaxBytes {
		if s.o.OnRefused != nil {
			s.o.OnRefused()
		}
		return &v8sandbox.HostError{Code: CodeQuotaExceeded, Message: fmt.Sprintf(
			"%s: state.set(%q): the key and its value take %d bytes, more than the %d a principal may keep (state.max_bytes); nothing was written",
			CodeQuotaExceeded, key, size, s.o.MaxBytes)}
	}
	ek := entryPrefix + key
	err := s.o.Store.Update(ctx, Namespace(owner), []string{usageKey, ek}, func(cur map[string][]byte) ([]kv.Change, error) {
		now := s.nowMS()
		u, err := s.usage(cur, now)
		if err != nil {
			return nil, err
		}
		if err := u.remove(key, cur[ek], now); err != nil {
			return nil, err
		}
		if u.Keys+1 > s.o.MaxKeys {
			return nil, &v8sandbox.HostError{Code: CodeQuotaExceeded, Message: fmt.Sprintf(
				"%s: state.set(%q): the principal keeps %d keys already, the most it may keep (state.max_keys); delete some first. Nothing was written",
				CodeQuotaExceeded, key, u.Keys)}
		}
		if u.Bytes+size > s.o.MaxBytes {
			return nil, &v8sandbox.HostError{Code: CodeQuotaExceeded, Message: fmt.Sprintf(
				"%s: state.set(%q): the principal's keys and values take %d bytes, and %d more would pass the %d it may keep (state.max_bytes); nothing was written",
				CodeQuotaExceeded, key, u.Bytes, size, s.o.MaxBytes)}
		}
		e := entry{V: value}
		u.Keys++
		u.Bytes += size
		if ttl > 0 {
			e.E = now + ttl.Milliseconds()
			if u.Expiring == nil {
				u.Expiring = map[string][2]int64{}
			}
			u.Expiring[key] = [2]int64{int64(size), e.E}
		}
		eb, _ := json.Marshal(e)
		ub, _ := json.Marshal(u)
		return []kv.Change{{Key: usageKey, Value: ub}, {Key: ek, Value: eb, TTL: ttl}}, nil
	})
	if s.o.OnRefused != nil {
		if he, ok := errors.AsType[*v8sandbox.HostError](err); ok && he.Code == CodeQuotaExceeded {
			s.o.OnRefused()
		}
	}
	return failureOrNil("set", err)
}

// Delete removes owner's key and reports whether it was there (and not
// expired).
func (s *State) Delete(ctx context.Context, owner, key string) (bool, error) {
	if err := checkKey(key); err != nil {
		return false, err
	}
	ek := entryPrefix + key
	existed := false
	err := s.o.Store.Update(ctx, Namespace(owner), []string{usageKey, ek}, func(cur map[string][]byte) ([]kv.Change, error) {
		now := s.nowMS()
		u, err := s.usage(cur, now)
		if err != nil {
			return nil, err
		}
		old, err := live(cur[ek], cur[ek] != nil, now)
		if err != nil {
			return nil, err
		}
		existed = old != nil
		if err := u.remove(key, cur[ek], now); err != nil {
			return nil, err
		}
		ub, _ := json.Marshal(u)
		changes := []kv.Change{{Key: usageKey, Value: ub}}
		if cur[ek] != nil {
			changes = append(changes, kv.Change{Key: ek, Delete: true})
		}
		return changes, nil
	})
	return existed, failureOrNil("delete", err)
}

// usage decodes the usage record read in an update, pruned at now.
func (s *State) usage(cur map[string][]byte, now int64) (*usage, error) {
	u := &usage{}
	if raw, ok := cur[usageKey]; ok {
		if err := json.Unmarshal(raw, u); err != nil {
			return nil, fmt.Errorf("the state usage record does not decode: %w (%w)", err, kv.ErrUnavailable)
		}
	}
	u.prune(now)
	return u, nil
}

// remove takes key's current entry (raw, as stored; nil when absent) out
// of u's counts: by its usage record when it expires, else by its size.
func (u *usage) remove(key string, raw []byte, now int64) error {
	if x, ok := u.Expiring[key]; ok {
		u.Keys--
		u.Bytes -= int(x[0])
		delete(u.Expiring, key)
		return nil
	}
	old, err := live(raw, raw != nil, now)
	if err != nil || old == nil {
		return err
	}
	if old.E != 0 {
		return nil // expiring, and pruned from the record already
	}
	u.Keys--
	u.Bytes -= len(key) + len(old.V)
	return nil
}

// ListOptions select the keys of a [State.List].
type ListOptions struct {
	// Prefix keeps keys that start with it.
	Prefix string
	// After keeps keys that sort after it (the last key of the previous
	// page).
	After string
	// Limit is the most keys returned: 0 means DefaultListLimit; at most
	// MaxListLimit.
	Limit int
}

// List returns owner's keys (not expired) that o selects, in byte order.
func (s *State) List(ctx context.Context, owner string, o ListOptions) ([]string, error) {
	switch {
	case o.Limit < 0:
		return nil, invalid("state.list: limit must not be negative")
	case o.Limit == 0:
		o.Limit = DefaultListLimit
	case o.Limit > MaxListLimit:
		o.Limit = MaxListLimit
	}
	if len(o.Prefix) > MaxKeyBytes || len(o.After) > MaxKeyBytes {
		return nil, invalid("state.list: prefix and after have at most %d bytes", MaxKeyBytes)
	}
	after := ""
	if o.After != "" {
		after = entryPrefix + o.After
	}
	entries, err := s.o.Store.List(ctx, Namespace(owner), kv.ListOptions{Prefix: entryPrefix + o.Prefix, After: after, Limit: o.Limit})
	if err != nil {
		return nil, failure("list", err)
	}
	now := s.nowMS()
	keys := make([]string, 0, len(entries))
	for _, e := range entries {
		v, err := live(e.Value, true, now)
		if err != nil {
			return nil, failure("list", err)
		}
		if v != nil {
			keys = append(keys, strings.TrimPrefix(e.Key, entryPrefix))
		}
	}
	return keys, nil
}

// Usage is how many keys and bytes owner's state holds now.
func (s *State) Usage(ctx context.Context, owner string) (keys, bytes int, err error) {
	raw, err := s.o.Store.Get(ctx, Namespace(owner), usageKey)
	if errors.Is(err, kv.ErrNotFound) {
		return 0, 0, nil
	}
	if err != nil {
		return 0, 0, failure("usage", err)
	}
	u, err := s.usage(map[string][]byte{usageKey: raw}, s.nowMS())
	if err != nil {
		return 0, 0, failure("usage", err)
	}
	return u.Keys, u.Bytes, nil
}
