package output

import (
	"bytes"
	"container/list"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Store defaults used by NewStore for non-positive arguments.
const (
	DefaultStoreTTL      = 15 * time.Minute
	DefaultStoreMaxBytes = 64 << 20
)

// ResultURIPrefix is the MCP resource URI prefix under which stored results
// are offered: ResultURIPrefix + id, optionally followed by "/" + a path.
const ResultURIPrefix = "isogate://result/"

// Errors returned by Store.GetPath and ParseResultURI. Path errors wrap
// ErrBadPath and carry a message naming the offending segment.
var (
	// ErrNotFound means no result exists under that id for that owner: it
	// never existed, expired, was evicted, or belongs to another owner.
	ErrNotFound = errors.New("result not found or expired")
	// ErrNotJSON means a path was requested into a result that is not JSON.
	ErrNotJSON = errors.New("stored result is not JSON; read it without a path")
	// ErrBadPath means the path does not address a part of the result.
	ErrBadPath = errors.New("bad result path")
)

// Store keeps full results for a bounded time and total size so that an
// agent can fetch what a summary left out. It is safe for concurrent use.
//
// Entries expire ttl after they were stored (reads do not extend this). When
// a new entry would push the total past maxBytes, the oldest entries are
// evicted first. Every entry belongs to an owner (for example a session id);
// Get and GetPath only find entries stored under the same owner, so ids
// leaking between sessions do not leak data. The empty owner is an ordinary
// owner.
type Store struct {
	mu    sync.Mutex
	ttl   time.Duration
	max   int
	now   func() time.Time
	byID  map[string]*list.Element // of *storeEntry
	order *list.List               // oldest first
	bytes int
	newID func() string
}

type storeEntry struct {
	id, owner, data string
	at              time.Time
}

// StoreOption configures a Store created by NewStore.
type StoreOption func(*Store)

// WithClock makes the store read the time from now instead of time.Now,
// so tests can move time forward without sleeping.
func WithClock(now func() time.Time) StoreOption {
	return func(s *Store) {
		if now != nil {
			s.now = now
		}
	}
}

// NewStore returns an empty store whose entries live for ttl and whose
// entries together hold at most maxBytes bytes of result data. A
// non-positive ttl or maxBytes selects DefaultStoreTTL or
// DefaultStoreMaxBytes.
func NewStore(ttl time.Duration, maxBytes int, opts ...StoreOption) *Store {
	if ttl <= 0 {
		ttl = DefaultStoreTTL
	}
	if maxBytes <= 0 {
		maxBytes = DefaultStoreMaxBytes
	}
	s := &Store{
		ttl:   ttl,
		max:   maxBytes,
		now:   time.Now,
		byID:  make(map[string]*list.Element),
		order: list.New(),
		newID: randomID,
	}
	for _, o := range opts {
		o(s)
	}
	return s
}

// randomID returns 16 hex characters (64 bits) from crypto/rand.
func randomID() string {
	var b [8]byte
	rand.Read(b[:]) // never fails (crashes the program instead) since Go 1.24
	return hex.EncodeToString(b[:])
}

// MaxBytes reports the most result data the store holds at once; a single
// result larger than this is never stored.
func (s *Store) MaxBytes() int { return s.max }

// Put stores data for owner and returns its new, unguessable id. It returns
// ok == false (and stores nothing) when data alone is larger than the
// store's size limit. Older entries are evicted as needed to make room.
func (s *Store) Put(owner, data string) (id string, ok bool) {
	if len(data) > s.max {
		return "", false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.expireLocked()
	for s.bytes+len(data) > s.max {
		s.removeLocked(s.order.Front())
	}
	for {
		id = s.newID()
		if _, dup := s.byID[id]; !dup {
			break
		}
	}
	e := &storeEntry{id: id, owner: owner, data: data, at: s.now()}
	s.byID[id] = s.order.PushBack(e)
	s.bytes += len(data)
	return id, true
}

// Get returns the result stored under id for owner. It reports false when
// there is none: never stored, expired, evicted, or stored by another owner.
func (s *Store) Get(owner, id string) (string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.expireLocked()
	el, ok := s.byID[id]
	if !ok {
		return "", false
	}
	e := el.Value.(*storeEntry)
	if s.now().Sub(e.at) >= s.ttl { // behind a younger entry if the clock went back
		s.removeLocked(el)
		return "", false
	}
	if subtle.ConstantTimeCompare([]byte(e.owner), []byte(owner)) != 1 {
		return "", false
	}
	return e.data, true
}

// GetPath returns the part of the JSON result stored under id for owner
// addressed by path, pretty-printed with two-space indentation (key order and
// string escapes as in the stored result; a string part is returned as a JSON
// string literal).
//
// The path is a slash-separated list of object keys and array indexes, e.g.
// "results/items/3/name". Empty segments are ignored, so "" and "/" address
// the whole result. A segment is an array index when the current value is an
// array (decimal, zero-based); otherwise it is an object key, matched exactly
// or, failing that, after percent-decoding (so keys containing "/" can be
// written as %2F); of duplicate keys the last wins. Errors wrap
// ErrNotFound, ErrNotJSON or ErrBadPath.
func (s *Store) GetPath(owner, id, path string) (string, error) {
	data, ok := s.Get(owner, id)
	if !ok {
		return "", fmt.Errorf("%w: %s", ErrNotFound, id)
	}
	cur := json.RawMessage(strings.Trim(data, jsonSpace))
	if !json.Valid(cur) {
		return "", ErrNotJSON
	}
	var at []string
	for _, seg := range strings.Split(path, "/") {
		if seg == "" {
			continue
		}
		next, err := step(cur, seg)
		if err != nil {
			where := "the top level"
			if len(at) > 0 {
				where = strconv.Quote(strings.Join(at, "/"))
			}
			return "", fmt.Errorf("%w %q: at %s: %v", ErrBadPath, path, where, err)
		}
		cur = next
		at = append(at, seg)
	}
	var out bytes.Buffer
	if err := json.Indent(&out, cur, "", "  "); err != nil {
		return "", fmt.Errorf("%w: %v", ErrNotJSON, err)
	}
	return out.String(), nil
}

// step descends from the JSON value cur by one path segment.
func step(cur json.RawMessage, seg string) (json.RawMessage, error) {
	switch cur[0] {
	case '[':
		var items []json.RawMessage
		if err := json.Unmarshal(cur, &items); err != nil {
			return nil, err
		}
		if strings.TrimLeft(seg, "0123456789") != "" {
			return nil, fmt.Errorf("%q is not an array index (array has %d items)", seg, len(items))
		}
		i, err := strconv.Atoi(seg) // err: too large for an int
		if err != nil || i >= len(items) {
			return nil, fmt.Errorf("index %s out of range (array has %d items)", seg, len(items))
		}
		return items[i], nil
	case '{':
		var obj map[string]json.RawMessage
		if err := json.Unmarshal(cur, &obj); err != nil {
			return nil, err
		}
		if v, ok := obj[seg]; ok {
			return v, nil
		}
		if dec, err := url.PathUnescape(seg); err == nil {
			if v, ok := obj[dec]; ok {
				return v, nil
			}
		}
		keys := make([]string, 0, len(obj))
		for k := range obj {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		const maxListed = 20
		more := ""
		if len(keys) > maxListed {
			more = fmt.Sprintf(", … (%d more)", len(keys)-maxListed)
			keys = keys[:maxListed]
		}
		return nil, fmt.Errorf("no key %q (keys: %s%s)", seg, strings.Join(keys, ", "), more)
	default:
		kind := "a scalar"
		switch cur[0] {
		case '"':
			kind = "a string"
		case 't', 'f':
			kind = "a boolean"
		case 'n':
			kind = "null"
		default:
			kind = "a number"
		}
		return nil, fmt.Errorf("value is %s, cannot look up %q", kind, seg)
	}
}

// Len reports how many unexpired results the store holds.
func (s *Store) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.expireLocked()
	return s.order.Len()
}

// Bytes reports the total size of the unexpired results the store holds.
func (s *Store) Bytes() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.expireLocked()
	return s.bytes
}

// expireLocked drops entries at least ttl old. Entries are kept in insertion
// order, so it stops at the first live one; Get re-checks the entry it finds
// in case a clock that went backwards left an expired entry behind it.
func (s *Store) expireLocked() {
	now := s.now()
	for el := s.order.Front(); el != nil; el = s.order.Front() {
		if now.Sub(el.Value.(*storeEntry).at) < s.ttl {
			return
		}
		s.removeLocked(el)
	}
}

func (s *Store) removeLocked(el *list.Element) {
	e := s.order.Remove(el).(*storeEntry)
	delete(s.byID, e.id)
	s.bytes -= len(e.data)
}

// ResultURI returns the resource URI of a stored result, or of the part of
// it at path (slash-separated keys and indexes, as for Store.GetPath) when
// path is non-empty.
func ResultURI(id, path string) string {
	path = strings.Trim(path, "/")
	if path == "" {
		return ResultURIPrefix + id
	}
	return ResultURIPrefix + id + "/" + path
}

// ParseResultURI splits a result resource URI (see ResultURIPrefix) into
// the result id and the path inside it ("" for the whole result).
func ParseResultURI(uri string) (id, path string, err error) {
	rest, ok := strings.CutPrefix(uri, ResultURIPrefix)
	if !ok {
		return "", "", fmt.Errorf("%w: %q is not an %s URI", ErrBadPath, uri, ResultURIPrefix)
	}
	id, path, _ = strings.Cut(rest, "/")
	if id == "" {
		return "", "", fmt.Errorf("%w: %q has no result id", ErrBadPath, uri)
	}
	return id, path, nil
}
