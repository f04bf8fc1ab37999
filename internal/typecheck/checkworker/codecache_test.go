package checkworker

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/isogate/isogate/internal/testutil"
	"github.com/isogate/isogate/internal/typecheck"
)

// A checker worker reads no file: its parent sends it the compiler's code
// cache in the init frame and keeps the one a first worker made (its ready
// frame). The next worker compiles the compiler from it; a damaged file is
// not sent, and the cache a worker then makes replaces it.
func TestCheckerWorkerCodeCache(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "typecheck")
	start := func() typecheck.CodeCacheStats {
		t.Helper()
		c := NewChecker(CheckerOptions{Command: workerCommand(t), Logger: testutil.QuietLogger(t), Timeout: time.Minute, CacheDir: dir})
		defer c.Close()
		if err := c.Warm(t.Context()); err != nil {
			t.Fatal(err)
		}
		wantRefusal(t, c)
		return c.CodeCacheStats()
	}
	if got := start(); got != (typecheck.CodeCacheStats{Missed: 1, Stored: 1}) {
		t.Fatalf("first worker: %+v, want its cache stored", got)
	}
	if got := start(); got != (typecheck.CodeCacheStats{Loaded: 1}) {
		t.Fatalf("second worker: %+v, want the cache loaded and not stored again", got)
	}
	files, err := filepath.Glob(filepath.Join(dir, "*.v8cache"))
	if err != nil || len(files) != 1 {
		t.Fatalf("cache files %v, %v", files, err)
	}
	raw, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	raw[len(raw)/2] ^= 0x5a
	if err := os.WriteFile(files[0], raw, 0o600); err != nil {
		t.Fatal(err)
	}
	if got := start(); got != (typecheck.CodeCacheStats{Invalid: 1, Stored: 1}) {
		t.Fatalf("damaged cache: %+v, want it not sent and replaced", got)
	}
	if got := start(); got != (typecheck.CodeCacheStats{Loaded: 1}) {
		t.Fatalf("after the replacement: %+v, want the cache loaded", got)
	}
}
