package backend

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The tool cache is a single JSON file, CacheFileName in Options.CacheDir:
//
//	{"version": 1, "backends": {"<name>": {"fingerprint": "...", "updatedAt": "...", "tools": [...]}}}
//
// It is rewritten atomically (temporary file in the same directory, fsync,
// rename) whenever a backend's live tool list changes, and read once by
// NewManager so that Tools() can answer before any backend has connected.
// Entries for backends that are no longer configured are ignored (and
// dropped on the next write). The fingerprint covers the settings that
// determine which server runs (transport, command, args, cwd, url); an entry
// whose fingerprint does not match the current spec is ignored too, so a
// reconfigured backend never advertises the tools of its predecessor.

const cacheVersion = 1

type cacheFile struct {
	Version  int                    `json:"version"`
	Backends map[string]*cacheEntry `json:"backends"`
}

type cacheEntry struct {
	Fingerprint string      `json:"fingerprint"`
	UpdatedAt   time.Time   `json:"updatedAt"`
	Tools       []*mcp.Tool `json:"tools"`
}

// fingerprint identifies the server a spec runs.
func fingerprint(s *Spec) string {
	h := sha256.New()
	enc := json.NewEncoder(h)
	_ = enc.Encode([]any{s.Name, s.Transport, s.Command, s.Args, s.Cwd, s.URL})
	return hex.EncodeToString(h.Sum(nil)[:16])
}

// loadCache reads the cache file. A missing file yields an empty cache.
func loadCache(dir string) (map[string]*cacheEntry, error) {
	if dir == "" {
		return nil, nil
	}
	path := filepath.Join(dir, CacheFileName)
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading tool cache: %w", err)
	}
	var f cacheFile
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, fmt.Errorf("parsing tool cache %s: %w", path, err)
	}
	if f.Version != cacheVersion {
		return nil, fmt.Errorf("tool cache %s has version %d, want %d", path, f.Version, cacheVersion)
	}
	return f.Backends, nil
}

// writeCache atomically replaces the cache file with entries.
func writeCache(dir string, entries map[string]*cacheEntry) (err error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("creating cache dir: %w", err)
	}
	data, err := json.MarshalIndent(cacheFile{Version: cacheVersion, Backends: entries}, "", "  ")
	if err != nil {
		return fmt.Errorf("encoding tool cache: %w", err)
	}
	tmp, err := os.CreateTemp(dir, "."+CacheFileName+".tmp-*")
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
	if err := os.Rename(tmp.Name(), filepath.Join(dir, CacheFileName)); err != nil {
		return fmt.Errorf("replacing tool cache: %w", err)
	}
	return nil
}

// saveCache writes the currently known tool lists of all backends.
func (m *Manager) saveCache() {
	if m.opts.CacheDir == "" {
		return
	}
	m.cacheMu.Lock()
	defer m.cacheMu.Unlock()
	entries := make(map[string]*cacheEntry, len(m.backends))
	for name, b := range m.backends {
		b.mu.Lock()
		if b.toolsKnown {
			entries[name] = &cacheEntry{Fingerprint: b.fingerprint, UpdatedAt: b.toolsUpdatedAt, Tools: b.tools}
		}
		b.mu.Unlock()
	}
	if err := writeCache(m.opts.CacheDir, entries); err != nil {
		m.log.Warn("cannot write tool cache", slog.String("dir", m.opts.CacheDir), slog.Any("error", err))
	}
}
