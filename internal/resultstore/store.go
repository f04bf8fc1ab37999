// Package resultstore keeps full outputs (results cut by output shaping, run
// records) for a bounded time and size, per owner, so that an agent can read
// what a summary left out.
//
// Store is the seam: the in-memory [Memory] store is the default, and other
// implementations (for example one on Redis shared by several replicas) can
// replace it. Reading a part of a stored JSON result is a plain function over
// the stored bytes ([Lookup]), so a store only puts and gets.
package resultstore

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Store keeps data for an owner (a session or a caller's identity) and
// returns it only to the same owner. Budgets are counted per account, the
// part of the owner key [OwnerKey] built (a principal, whose sessions are
// owners of their own): all the sessions of one principal share one
// principal's budget, so that many sessions cannot fill the store.
// Implementations are safe for concurrent use.
type Store interface {
	// Put stores data for owner and returns its new, unguessable id. It
	// fails with ErrTooLarge when data alone exceeds what one account may
	// hold, and with ErrFull when the store cannot make room without
	// evicting another account's live data. It never writes to data
	// (callers may pass the bytes of a string).
	Put(ctx context.Context, owner string, data []byte) (id string, err error)
	// Get returns the data stored under id for owner. It fails with
	// ErrNotFound when there is none: never stored, expired, evicted, or
	// stored by another owner (indistinguishable on purpose).
	Get(ctx context.Context, owner, id string) ([]byte, error)
	// Limits reports the store's retention and size budgets.
	Limits() Limits
}

// Keyed is a [Store] that can also store data under an id the caller
// chose (an unguessable one, such as a run id), so that every replica
// sharing the store finds it by that id without a local index.
type Keyed interface {
	Store
	// PutID stores data for owner under id, with the same budgets and
	// errors as Put.
	PutID(ctx context.Context, owner, id string, data []byte) error
}

// Limits describe how long and how much a Store keeps.
type Limits struct {
	// TTL is how long an entry stays readable after it was stored.
	TTL time.Duration
	// MaxBytes bounds the data of all owners together.
	MaxBytes int
	// OwnerBytes bounds the data of one account (see [AccountOf]): of a
	// principal's sessions together; a single entry larger than this is
	// never stored.
	OwnerBytes int
}

// Defaults of [Limits] fields left zero.
const (
	DefaultTTL      = 15 * time.Minute
	DefaultMaxBytes = 64 << 20
	// DefaultOwnerShare is the fraction of MaxBytes one owner may hold
	// when OwnerBytes is zero: 1/DefaultOwnerShare.
	DefaultOwnerShare = 4
)

// WithDefaults fills in zero or negative fields. OwnerBytes never exceeds
// MaxBytes.
func (l Limits) WithDefaults() Limits {
	if l.TTL <= 0 {
		l.TTL = DefaultTTL
	}
	if l.MaxBytes <= 0 {
		l.MaxBytes = DefaultMaxBytes
	}
	if l.OwnerBytes <= 0 {
		l.OwnerBytes = max(l.MaxBytes/DefaultOwnerShare, 1)
	}
	l.OwnerBytes = min(l.OwnerBytes, l.MaxBytes)
	return l
}

// Errors of Store implementations and of Lookup. Implementations wrap them
// with context; test with errors.Is.
var (
	// ErrNotFound means no data exists under that id for that owner.
	ErrNotFound = errors.New("result not found or expired")
	// ErrTooLarge means one entry is larger than an owner may hold.
	ErrTooLarge = errors.New("result larger than the result store's per-owner share")
	// ErrFull means the store is full of other owners' live entries: a
	// typed, retryable refusal (its text starts with [CodeStoreFull]).
	ErrFull = errors.New(CodeStoreFull + ": the store is full of other callers' live entries; retry once they expire")
	// ErrNotJSON means a path was requested into data that is not JSON.
	ErrNotJSON = errors.New("stored result is not JSON; read it without a path")
	// ErrBadPath means a path or URI does not address a part of a result.
	ErrBadPath = errors.New("bad result path")
)

// CodeStoreFull is the error code of a store at its byte cap: retryable,
// as its entries expire.
const CodeStoreFull = "STORE_FULL"

// OwnerKey returns the owner key of what scope (a session; "" for none)
// of account (a principal, or a session without one) stores. Get needs the
// whole key; the byte budgets are counted per account ([AccountOf]). The
// account is escaped ("%" and "/" as %25 and %2F), so that the key names
// its account unambiguously whatever the two contain.
func OwnerKey(account, scope string) string {
	account = strings.NewReplacer("%", "%25", "/", "%2F").Replace(account)
	if scope == "" {
		return account
	}
	return account + "/" + scope
}

// AccountOf returns the account an owner key is charged to: the key up to
// its first "/" (all of it when it has none). Keys built by [OwnerKey] for
// one account, whatever their scope, share it.
func AccountOf(owner string) string {
	account, _, _ := strings.Cut(owner, "/")
	return account
}

// URIPrefix is the MCP resource URI prefix under which stored results are
// offered: URIPrefix + id, optionally followed by "/" + a path.
const URIPrefix = "isogate://result/"

// URI returns the resource URI of a stored result, or of the part of it at
// path (slash-separated keys and indexes, see [Lookup]) when path is
// non-empty.
func URI(id, path string) string {
	path = strings.Trim(path, "/")
	if path == "" {
		return URIPrefix + id
	}
	return URIPrefix + id + "/" + path
}

// ParseURI splits a result resource URI (see [URIPrefix]) into the result
// id and the path inside it ("" for the whole result).
func ParseURI(uri string) (id, path string, err error) {
	rest, ok := strings.CutPrefix(uri, URIPrefix)
	if !ok {
		return "", "", fmt.Errorf("%w: %q is not an %s URI", ErrBadPath, uri, URIPrefix)
	}
	id, path, _ = strings.Cut(rest, "/")
	if id == "" {
		return "", "", fmt.Errorf("%w: %q has no result id", ErrBadPath, uri)
	}
	return id, path, nil
}
