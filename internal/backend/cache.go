package backend

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The tool cache holds one file per backend in CacheDir/CacheSubdir, named
// after the backend's fingerprint, a hash of its effective spec:
//
//	<CacheDir>/tools/<fingerprint>.json = {"version": 2, "backend": "<name>", "updatedAt": "...", "tools": [...]}
//
// The fingerprint covers everything that determines which server runs and
// what it offers (transport, command, args, env, inherit_env, cwd, url,
// headers; the name only for custom transports), so the entry is found
// whatever the configuration file is called or where it lives, several
// configurations share the entries of identical backends, and a
// reconfigured backend never advertises the tools of its predecessor. A
// backend's file is rewritten atomically (temporary file in the same
// directory, fsync, rename) as soon as it lists its tools, so concurrent
// gateways never see a partial file; the last writer wins.

const cacheVersion = 2

// CacheSubdir is the directory inside [Options.CacheDir] holding one tool
// cache file per backend.
const CacheSubdir = "tools"

type cacheEntry struct {
	Version   int         `json:"version"`
	Backend   string      `json:"backend"` // informational: the name it was written under
	UpdatedAt time.Time   `json:"updatedAt"`
	Tools     []*mcp.Tool `json:"tools"`
}

// fingerprint identifies the server a spec runs. Secrets in env and headers
// enter only through the hash.
func fingerprint(s *Spec) string {
	h := sha256.New()
	enc := json.NewEncoder(h)
	name := ""
	if s.Transport == TransportCustom {
		name = s.Name // a Dial function has no identity of its own
	}
	_ = enc.Encode([]any{cacheVersion, name, s.Transport, s.Command, s.Args, sortedPairs(s.Env), s.InheritEnv,
		s.Cwd, s.URL, sortedPairs(s.Headers)})
	if s.Auth.Type != "" {
		// Only when set, so that other backends keep their fingerprints;
		// without the secret, which should not reach a file even hashed.
		au := s.Auth
		au.ClientSecret = ""
		_ = enc.Encode(au)
	}
	return hex.EncodeToString(h.Sum(nil)[:16])
}

func sortedPairs(m map[string]string) [][2]string {
	out := make([][2]string, 0, len(m))
	for _, k := range slices.Sorted(maps.Keys(m)) {
		out = append(out, [2]string{k, m[k]})
	}
	return out
}

// cachePath returns the cache file of the backend with fingerprint fp.
func cachePath(dir, fp string) string {
	return filepath.Join(dir, CacheSubdir, fp+".json")
}

// ToolCache keeps backends' tool lists across restarts and across gateway
// replicas: one entry per backend fingerprint, the JSON described above.
// Get returns nil and no error when there is no entry. Implementations are
// safe for concurrent use. A failing cache is logged and otherwise ignored:
// it never stops a backend.
type ToolCache interface {
	Get(ctx context.Context, key string) ([]byte, error)
	Put(ctx context.Context, key string, entry []byte) error
}

// DirCache is the [ToolCache] in a directory: one file per backend in
// Dir/[CacheSubdir], replaced atomically.
type DirCache struct{ Dir string }

// Get implements [ToolCache].
func (d DirCache) Get(_ context.Context, key string) ([]byte, error) {
	data, err := os.ReadFile(cachePath(d.Dir, key))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading tool cache: %w", err)
	}
	return data, nil
}

// Put implements [ToolCache]: a temporary file in the same directory,
// fsync, rename.
func (d DirCache) Put(_ context.Context, key string, data []byte) (err error) {
	sub := filepath.Join(d.Dir, CacheSubdir)
	if err := os.MkdirAll(sub, 0o755); err != nil {
		return fmt.Errorf("creating cache dir: %w", err)
	}
	tmp, err := os.CreateTemp(sub, "."+key+".tmp-*")
	if err != nil {
		return fmt.Errorf("creating temporary cache file: %w", err)
	}
	defer func() {
		if err != nil {
			_ = tmp.Close()
			_ = os.Remove(tmp.Name())
		}
	}()
	if _, err := tmp.Write(data); err != nil {
		return fmt.Errorf("writing %s: %w", tmp.Name(), err)
	}
	if err := tmp.Sync(); err != nil {
		return fmt.Errorf("syncing %s: %w", tmp.Name(), err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("closing %s: %w", tmp.Name(), err)
	}
	if err := os.Rename(tmp.Name(), cachePath(d.Dir, key)); err != nil {
		return fmt.Errorf("replacing tool cache: %w", err)
	}
	return nil
}

// cacheTimeout bounds one cache read or write (a Redis that does not answer
// must not hold up a backend).
const cacheTimeout = 2 * time.Second

// getCacheEntry reads and checks a backend's entry; a missing entry yields
// nil.
func getCacheEntry(ctx context.Context, c ToolCache, fp string) (*cacheEntry, error) {
	data, err := c.Get(ctx, fp)
	if err != nil || data == nil {
		return nil, err
	}
	var e cacheEntry
	if err := json.Unmarshal(data, &e); err != nil {
		return nil, fmt.Errorf("parsing tool cache entry %s: %w", fp, err)
	}
	if e.Version != cacheVersion {
		return nil, fmt.Errorf("tool cache entry %s has version %d, want %d", fp, e.Version, cacheVersion)
	}
	return &e, nil
}

// putCacheEntry replaces a backend's entry.
func putCacheEntry(ctx context.Context, c ToolCache, fp string, e *cacheEntry) error {
	e.Version = cacheVersion
	data, err := json.Marshal(e)
	if err != nil {
		return fmt.Errorf("encoding tool cache: %w", err)
	}
	return c.Put(ctx, fp, data)
}

// loadCache seeds the backend's tool list from the tool cache.
func (b *backend) loadCache() {
	cache := b.opts.toolCache()
	if cache == nil || b.invalid != nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), cacheTimeout)
	defer cancel()
	e, err := getCacheEntry(ctx, cache, b.fingerprint)
	if err != nil {
		b.log.Warn("ignoring tool cache", slog.Any("error", err))
		return
	}
	if e == nil {
		return
	}
	tools := slices.DeleteFunc(e.Tools, func(t *mcp.Tool) bool { return t == nil })
	b.tools, b.toolsKnown, b.toolsCached, b.toolsUpdatedAt = tools, true, true, e.UpdatedAt
	b.log.Debug("loaded cached tools", slog.Int("tools", len(tools)))
}

// saveCache writes the backend's live tool list to the tool cache.
func (b *backend) saveCache(tools []*mcp.Tool, at time.Time) {
	cache := b.opts.toolCache()
	if cache == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), cacheTimeout)
	defer cancel()
	e := &cacheEntry{Backend: b.spec.Name, UpdatedAt: at, Tools: tools}
	if err := putCacheEntry(ctx, cache, b.fingerprint, e); err != nil {
		b.log.Warn("cannot write tool cache", slog.Any("error", err))
	}
}
