package kv

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"
)

// BoltFile is the name of the database file in a data directory.
const BoltFile = "isogate.db"

const (
	// DefaultOpenTimeout is how long opening a data directory waits for
	// the file lock another process holds (BoltOptions.OpenTimeout).
	DefaultOpenTimeout = 2 * time.Second
	// DefaultSweepEvery is how often expired entries are removed from the
	// file (BoltOptions.SweepEvery).
	DefaultSweepEvery = time.Minute
)

// BoltOptions configure [OpenBolt]; zero fields take defaults.
type BoltOptions struct {
	// Dir is the data directory, created (0700) if missing. Required.
	Dir string
	// OpenTimeout bounds the wait for the file's lock, which one process
	// holds at a time; default DefaultOpenTimeout.
	OpenTimeout time.Duration
	// SweepEvery is how often expired entries are deleted from the file
	// (they are absent to every read from the moment they expire); default
	// DefaultSweepEvery.
	SweepEvery time.Duration
	// Logger receives sweep failures; default slog.Default().
	Logger *slog.Logger
}

// Bolt is a [Store] in a bbolt file (<Dir>/isogate.db): durable on one
// machine, every write synced before it returns. One process at a time
// holds the file; within a process, stores opened on the same directory
// share one open file. Each namespace is a bucket; a value is stored after
// an 8-byte expiry stamp (Unix milliseconds, 0: none).
type Bolt struct {
	f    *boltFile
	once sync.Once
}

// boltFile is one open database shared by the Bolt handles of a path.
type boltFile struct {
	path string
	db   *bolt.DB
	refs int // guarded by boltFiles.mu
	stop chan struct{}
	done chan struct{}
}

// boltFiles are the files open in this process, by absolute path.
var boltFiles = struct {
	mu    sync.Mutex
	files map[string]*boltFile
}{files: map[string]*boltFile{}}

// OpenBolt opens (creating it on first use) the store in o.Dir. A file
// that another process holds past o.OpenTimeout is an error wrapping
// [ErrHeld]; one that cannot be created or read, [ErrUnavailable].
func OpenBolt(o BoltOptions) (*Bolt, error) {
	if o.Dir == "" {
		return nil, fmt.Errorf("kv: no data directory: %w", ErrInvalid)
	}
	if o.OpenTimeout <= 0 {
		o.OpenTimeout = DefaultOpenTimeout
	}
	if o.SweepEvery <= 0 {
		o.SweepEvery = DefaultSweepEvery
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	dir, err := filepath.Abs(o.Dir)
	if err != nil {
		return nil, fmt.Errorf("data directory %s: %w", o.Dir, err)
	}
	path := filepath.Join(dir, BoltFile)
	boltFiles.mu.Lock()
	defer boltFiles.mu.Unlock()
	if f := boltFiles.files[path]; f != nil {
		f.refs++
		return &Bolt{f: f}, nil
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("creating data directory %s: %w (%w)", dir, err, ErrUnavailable)
	}
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: o.OpenTimeout})
	if errors.Is(err, berrors.ErrTimeout) {
		return nil, fmt.Errorf("store %s is held by another process (another isogate on this data directory? give each its own store.data_dir, or share store.redis_url): %w", path, ErrHeld)
	}
	if err != nil {
		return nil, fmt.Errorf("opening store %s: %w (%w)", path, err, ErrUnavailable)
	}
	f := &boltFile{path: path, db: db, refs: 1, stop: make(chan struct{}), done: make(chan struct{})}
	boltFiles.files[path] = f
	go f.sweepLoop(o.SweepEvery, o.Logger)
	return &Bolt{f: f}, nil
}

// Path is the database file.
func (b *Bolt) Path() string { return b.f.path }

// Close releases this handle; the file is closed with its last handle.
func (b *Bolt) Close() error {
	var err error
	b.once.Do(func() {
		boltFiles.mu.Lock()
		b.f.refs--
		last := b.f.refs == 0
		if last {
			delete(boltFiles.files, b.f.path)
		}
		boltFiles.mu.Unlock()
		if last {
			close(b.f.stop)
			<-b.f.done
			err = b.f.db.Close()
		}
	})
	return err
}

// wrap marks the errors of a closed or failing file as unavailable; the
// sentinel errors of this package pass as they are.
func (b *Bolt) wrap(err error) error {
	if err == nil || errors.Is(err, ErrNotFound) || errors.Is(err, ErrInvalid) {
		return err
	}
	return fmt.Errorf("store %s: %w (%w)", b.f.path, err, ErrUnavailable)
}

// stamp encodes an expiry before value.
func stamp(value []byte, ttl time.Duration, now time.Time) []byte {
	out := make([]byte, 8, 8+len(value))
	if ttl > 0 {
		binary.BigEndian.PutUint64(out, uint64(now.Add(ttl).UnixMilli()))
	}
	return append(out, value...)
}

// unstamp returns the value of a stored entry and whether it is live.
func unstamp(raw []byte, now time.Time) ([]byte, bool) {
	if len(raw) < 8 {
		return nil, false
	}
	exp := binary.BigEndian.Uint64(raw)
	if exp != 0 && now.UnixMilli() >= int64(exp) {
		return nil, false
	}
	return raw[8:], true
}

// Get implements [Store].
func (b *Bolt) Get(_ context.Context, ns, key string) ([]byte, error) {
	if err := check(ns, key); err != nil {
		return nil, err
	}
	var out []byte
	err := b.f.db.View(func(tx *bolt.Tx) error {
		if bk := tx.Bucket([]byte(ns)); bk != nil {
			if v, ok := unstamp(bk.Get([]byte(key)), time.Now()); ok {
				out = slices.Clone(v)
				return nil
			}
		}
		return fmt.Errorf("%s/%s: %w", ns, key, ErrNotFound)
	})
	return out, b.wrap(err)
}

// Put implements [Store].
func (b *Bolt) Put(_ context.Context, ns, key string, value []byte, ttl time.Duration) error {
	if err := check(ns, key); err != nil {
		return err
	}
	return b.wrap(b.f.db.Update(func(tx *bolt.Tx) error {
		return apply(tx, ns, Change{Key: key, Value: value, TTL: ttl})
	}))
}

// apply writes one change in tx.
func apply(tx *bolt.Tx, ns string, c Change) error {
	if c.Delete {
		if bk := tx.Bucket([]byte(ns)); bk != nil {
			return bk.Delete([]byte(c.Key))
		}
		return nil
	}
	bk, err := tx.CreateBucketIfNotExists([]byte(ns))
	if err != nil {
		return err
	}
	return bk.Put([]byte(c.Key), stamp(c.Value, c.TTL, time.Now()))
}

// Delete implements [Store].
func (b *Bolt) Delete(_ context.Context, ns, key string) error {
	if err := check(ns, key); err != nil {
		return err
	}
	return b.wrap(b.f.db.Update(func(tx *bolt.Tx) error {
		return apply(tx, ns, Change{Key: key, Delete: true})
	}))
}

// List implements [Store].
func (b *Bolt) List(_ context.Context, ns string, o ListOptions) ([]Entry, error) {
	if err := check(ns); err != nil {
		return nil, err
	}
	limit := o.limit()
	var out []Entry
	err := b.f.db.View(func(tx *bolt.Tx) error {
		bk := tx.Bucket([]byte(ns))
		if bk == nil {
			return nil
		}
		now := time.Now()
		start := o.Prefix
		if o.After >= start {
			start = o.After
		}
		c := bk.Cursor()
		for k, v := c.Seek([]byte(start)); k != nil && len(out) < limit; k, v = c.Next() {
			if !bytes.HasPrefix(k, []byte(o.Prefix)) {
				break
			}
			if string(k) <= o.After {
				continue
			}
			if val, ok := unstamp(v, now); ok {
				out = append(out, Entry{Key: string(k), Value: slices.Clone(val)})
			}
		}
		return nil
	})
	return out, b.wrap(err)
}

// Update implements [Store]: one bbolt write transaction, so fn runs once.
func (b *Bolt) Update(_ context.Context, ns string, keys []string, fn func(map[string][]byte) ([]Change, error)) error {
	if err := check(ns, keys...); err != nil {
		return err
	}
	var fnErr error
	err := b.f.db.Update(func(tx *bolt.Tx) error {
		cur := map[string][]byte{}
		if bk := tx.Bucket([]byte(ns)); bk != nil {
			now := time.Now()
			for _, k := range keys {
				if v, ok := unstamp(bk.Get([]byte(k)), now); ok {
					cur[k] = slices.Clone(v)
				}
			}
		}
		changes, err := decide(fn, keys, cur)
		if err != nil {
			fnErr = err
			return err
		}
		for _, c := range changes {
			if err := apply(tx, ns, c); err != nil {
				return err
			}
		}
		return nil
	})
	if fnErr != nil {
		return fnErr
	}
	return b.wrap(err)
}

// Sweep deletes the expired entries of every namespace now; it returns how
// many it deleted. It runs every BoltOptions.SweepEvery on its own.
func (b *Bolt) Sweep() (int, error) {
	n, err := b.f.sweep()
	return n, b.wrap(err)
}

func (f *boltFile) sweep() (int, error) {
	n := 0
	err := f.db.Update(func(tx *bolt.Tx) error {
		now := time.Now()
		return tx.ForEach(func(_ []byte, bk *bolt.Bucket) error {
			var dead [][]byte
			err := bk.ForEach(func(k, v []byte) error {
				if _, ok := unstamp(v, now); !ok {
					dead = append(dead, slices.Clone(k))
				}
				return nil
			})
			if err != nil {
				return err
			}
			for _, k := range dead {
				if err := bk.Delete(k); err != nil {
					return err
				}
			}
			n += len(dead)
			return nil
		})
	})
	return n, err
}

func (f *boltFile) sweepLoop(every time.Duration, log *slog.Logger) {
	defer close(f.done)
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-f.stop:
			return
		case <-t.C:
			if _, err := f.sweep(); err != nil {
				log.Warn("kv: sweeping expired entries failed", "file", f.path, "err", err)
			}
		}
	}
}
