package typecheck

import (
	"context"
	"crypto/sha256"
	"os"
	"path/filepath"
	"testing"
)

// coldCheck loads a new checker with the code cache in dir, checks a
// program with a certain mistake and returns what the checker did with
// the cache. The check must find the mistake whatever the cache was.
func coldCheck(t *testing.T, dir string) CodeCacheStats {
	t.Helper()
	c := New(Options{Timeout: 60e9, CacheDir: dir})
	defer c.Close()
	rep, err := c.Check(context.Background(), counterDecls, certainCases[0].program, false)
	if err != nil {
		t.Fatalf("check: %v", err)
	}
	if got := rep.Certain(); len(got) != 1 || got[0].Kind != certainCases[0].kind {
		t.Fatalf("certain = %+v, want one %s", got, certainCases[0].kind)
	}
	return c.CodeCacheStats()
}

// rewriteCache replaces the data of dir's code cache file by edit's, with
// a valid header (magic and SHA-256) unless keepSum: the old sum is kept.
func rewriteCache(t *testing.T, dir string, keepSum bool, edit func(data []byte)) {
	t.Helper()
	path := filepath.Join(dir, codeCacheFileName())
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	head := len(codeCacheMagic) + sha256.Size
	edit(raw[head:])
	if !keepSum {
		sum := sha256.Sum256(raw[head:])
		copy(raw[len(codeCacheMagic):], sum[:])
	}
	if err := os.WriteFile(path, raw, 0o600); err != nil {
		t.Fatal(err)
	}
}

// The first checker of a cache directory finds no file (a miss), makes
// the compiler's code cache and stores it; the next one compiles the
// compiler from it. A damaged cache is never given to V8, which does not
// verify the data's checksum in release builds (a flipped byte in it
// crashes the process): the checker compiles from source, works, and stores a good cache again. A cache V8
// rejects (another script, V8 version or flags: its header says so) is
// replaced the same way.
func TestCodeCacheStoredUsedAndReplaced(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "typecheck")
	if got := coldCheck(t, dir); got != (CodeCacheStats{Missed: 1, Stored: 1}) {
		t.Fatalf("first checker: %+v, want the cache stored", got)
	}
	if fi, err := os.Stat(dir); err != nil || fi.Mode().Perm() != 0o700 {
		t.Fatalf("cache directory: %v %v, want mode 0700", fi, err)
	}
	if fi, err := os.Stat(filepath.Join(dir, codeCacheFileName())); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("cache file: %v %v, want mode 0600", fi, err)
	}
	if got := coldCheck(t, dir); got != (CodeCacheStats{Loaded: 1}) {
		t.Fatalf("second checker: %+v, want the cache loaded and not stored again", got)
	}

	rewriteCache(t, dir, true, func(data []byte) { data[len(data)/2] ^= 0x5a })
	if got := coldCheck(t, dir); got != (CodeCacheStats{Invalid: 1, Stored: 1}) {
		t.Fatalf("damaged cache: %+v, want it refused and replaced", got)
	}

	// V8's header: magic, version hash, source hash (the script's
	// length), flags hash …: another source length is a stale cache.
	rewriteCache(t, dir, false, func(data []byte) { data[8] ^= 0x01 })
	if got := coldCheck(t, dir); got != (CodeCacheStats{Rejected: 1, Stored: 1}) {
		t.Fatalf("stale cache: %+v, want V8 to reject it and a new one stored", got)
	}
	if _, err := readCodeCache(filepath.Join(dir, codeCacheFileName())); err != nil {
		t.Fatalf("the replaced cache: %v", err)
	}
}

// A cache file is read only when only this user may write it and its
// directory, and when it is whole.
func TestCodeCacheFileChecks(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "typecheck")
	data := []byte("some code cache data")
	if err := writeCodeCache(dir, data); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, codeCacheFileName())
	if got, err := readCodeCache(path); err != nil || string(got) != string(data) {
		t.Fatalf("read %q, %v; want what was written", got, err)
	}
	stale := filepath.Join(dir, "typescript-0.0.1-0123456789abcdef.v8cache")
	if err := os.WriteFile(stale, data, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := writeCodeCache(dir, data); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Fatalf("another version's cache is still there: %v", err)
	}

	for _, tc := range []struct {
		name  string
		spoil func() error
	}{
		{"group-writable file", func() error { return os.Chmod(path, 0o620) }},
		{"world-writable directory", func() error { return os.Chmod(dir, 0o703) }},
		{"truncated", func() error { return os.Truncate(path, int64(len(codeCacheMagic)+10)) }},
		{"symlink", func() error {
			other := filepath.Join(t.TempDir(), "other")
			if err := os.Rename(path, other); err != nil {
				return err
			}
			return os.Symlink(other, path)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := writeCodeCache(dir, data); err != nil {
				t.Fatal(err)
			}
			if err := tc.spoil(); err != nil {
				t.Fatal(err)
			}
			defer os.Chmod(dir, 0o700)
			if got, err := readCodeCache(path); err == nil {
				t.Fatalf("read %q from a spoilt cache", got)
			}
			os.Remove(path)
		})
	}
}
