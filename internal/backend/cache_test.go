package backend

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/isogate/isogate/config"
)

// TestCacheWrittenWhenToolsListed: the entry exists as soon as the backend
// is healthy, without waiting for shutdown (short sessions write it too).
func TestCacheWrittenWhenToolsListed(t *testing.T) {
	dir := t.TempDir()
	spec := inProcess("calc", newCalcServer())
	m := startManager(t, Options{CacheDir: dir, Specs: []Spec{spec}})
	waitHealthy(t, m)
	e, err := loadCacheEntry(dir, fingerprint(&spec))
	if err != nil || e == nil || len(e.Tools) != 1 || e.Tools[0].Name != "add" || e.Backend != "calc" {
		t.Fatalf("cache entry while running: %+v, %v", e, err)
	}
}

// TestCacheConcurrentWriters: writers replacing one entry (as several
// gateways sharing a cache directory do) never expose a partial file.
func TestCacheConcurrentWriters(t *testing.T) {
	dir := t.TempDir()
	const writers, rounds = 4, 25
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for r := range rounds {
				tools := make([]*mcp.Tool, 50+w)
				for i := range tools {
					tools[i] = &mcp.Tool{Name: fmt.Sprintf("w%d_r%d_t%d", w, r, i), Description: "x"}
				}
				if err := writeCacheEntry(dir, "shared", &cacheEntry{Backend: "b", Tools: tools}); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Go(func() {
		for range writers * rounds {
			e, err := loadCacheEntry(dir, "shared")
			if err != nil {
				t.Errorf("reader saw a broken entry: %v", err)
				return
			}
			if e != nil && (len(e.Tools) < 50 || len(e.Tools) >= 50+writers) {
				t.Errorf("reader saw %d tools", len(e.Tools))
				return
			}
		}
	})
	wg.Wait()
	if tmp, _ := filepath.Glob(filepath.Join(dir, CacheSubdir, ".*")); len(tmp) != 0 {
		t.Fatalf("temporary files left behind: %v", tmp)
	}
	if _, err := os.Stat(cachePath(dir, "shared")); err != nil {
		t.Fatal(err)
	}
}

// loadCacheEntry reads a backend's cache file; a missing file yields nil.
func loadCacheEntry(dir, fp string) (*cacheEntry, error) {
	return getCacheEntry(context.Background(), DirCache{dir}, fp)
}

// writeCacheEntry atomically replaces a backend's cache file.
func writeCacheEntry(dir, fp string, e *cacheEntry) error {
	return putCacheEntry(context.Background(), DirCache{dir}, fp, e)
}

// TestFingerprintStable pins the fingerprints of a few specs: existing tool
// caches (directories and Redis shared by replicas) are keyed by them, so a
// change to how a spec is described must not change the bytes hashed.
func TestFingerprintStable(t *testing.T) {
	for _, c := range []struct {
		spec Spec
		want string
	}{
		{Spec{Backend: config.Backend{Name: "fs", Transport: config.TransportStdio, Command: "npx", Args: []string{"-y", "@modelcontextprotocol/server-filesystem", "/tmp"},
			Env: map[string]string{"B": "2", "A": "1"}, Cwd: "/srv", InheritEnv: true, Tags: []string{"files"}}},
			"2392ec5328fbdfc273b3efd2016d8047"},
		{Spec{Backend: config.Backend{Name: "gh", Transport: config.TransportStreamableHTTP, URL: "https://api.example.com/mcp",
			Headers: map[string]string{"Authorization": "Bearer x", "X-Team": "a"}, Timeout: 5 * time.Second, MaxConcurrentCalls: 3}},
			"ed41f04a4735f8a3528450ce7f64235b"},
		{Spec{Backend: config.Backend{Name: "old", Transport: config.TransportSSE, URL: "http://127.0.0.1:9000/sse"}},
			"c23301e6a9ef1fdd20d44aa5da38da65"},
		{Spec{Backend: config.Backend{Name: "local", Transport: TransportCustom}},
			"c95712edcc37b7d6dd5746eb4c9ad338"},
	} {
		if got := fingerprint(&c.spec); got != c.want {
			t.Errorf("fingerprint of %q = %s, want %s (existing tool caches would be missed)", c.spec.Name, got, c.want)
		}
	}
}
