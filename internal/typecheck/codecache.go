package typecheck

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"

	v8 "rogchap.com/v8go"
)

// V8's code cache of the compiler's script (typescript.js), kept in a file
// so that a new process compiles the compiler from it instead of from
// source: the cache is made once the checker's setup has run (the
// libraries parsed, a first check made), so it holds the bytecode of the
// functions a check runs as well as the eager ones.
//
// V8 checks a code cache only for its own version, its flags and the
// script's length; in release builds it does not verify the data's
// checksum, and altered data can crash the process. So the file holds a
// SHA-256 of the data, checked before V8 sees it, and is read only when it
// is a regular file that this user owns and only this user may write, in
// a directory only this user may write: anyone else's bytes are not
// loaded. A file that fails any check, or that V8 rejects, is replaced by
// the next cache this process makes.

// codeCacheMagic starts a code cache file; the SHA-256 of the data follows,
// then the data.
const codeCacheMagic = "isogate typescript.js v8 code cache 1\n"

// maxCodeCacheBytes bounds a code cache file (the cache is about 3 MB).
const maxCodeCacheBytes = 64 << 20

// CodeCacheStats counts what a checker did with its code cache file.
type CodeCacheStats struct {
	// Loaded counts caches V8 took (the compiler compiled from the file).
	Loaded int64
	// Rejected counts caches V8 refused (another V8 version or flags).
	Rejected int64
	// Invalid counts files not given to V8: damaged (hash, header, size)
	// or writable by someone else.
	Invalid int64
	// Stored counts caches written.
	Stored int64
	// Missed counts loads that found no file (the first start with a
	// cache directory, or after a compiler or V8 upgrade).
	Missed int64
}

// CodeCacheFile keeps the code cache of the compiler's script in a file
// of a directory (a checker's Options.CacheDir). It implements
// v8sandbox.ResidentCodeCache; a process that keeps the file for a checker
// elsewhere (procpool's checker worker, which may read no file) calls its
// methods as the checker would. Safe for concurrent use.
type CodeCacheFile struct {
	dir    func() string // "" when there is no directory: no cache kept
	logger *slog.Logger

	loaded, rejected, invalid, stored, missed atomic.Int64
}

// NewCodeCacheFile returns the code cache file of dir ("": none kept).
func NewCodeCacheFile(dir string) *CodeCacheFile {
	return &CodeCacheFile{dir: func() string { return dir }, logger: slog.Default()}
}

// Stats reports what was done with the file.
func (f *CodeCacheFile) Stats() CodeCacheStats {
	return CodeCacheStats{Loaded: f.loaded.Load(), Rejected: f.rejected.Load(), Invalid: f.invalid.Load(), Stored: f.stored.Load(),
		Missed: f.missed.Load()}
}

// Path is the code cache file ("" when no cache is kept).
func (f *CodeCacheFile) Path() string {
	dir := f.dir()
	if dir == "" {
		return ""
	}
	return filepath.Join(dir, codeCacheFileName())
}

var (
	codeCacheNameOnce sync.Once
	codeCacheName     string
)

// codeCacheFileName names the cache of this binary's compiler script
// under this binary's V8: a binary with another compiler or V8 uses
// another file.
func codeCacheFileName() string {
	codeCacheNameOnce.Do(func() {
		h := sha256.New()
		h.Write(compilerZst)
		io.WriteString(h, compilerWrapStart+compilerWrapEnd+"\x00"+v8.Version())
		codeCacheName = "typescript-" + CompilerVersion + "-" + hex.EncodeToString(h.Sum(nil)[:8]) + ".v8cache"
	})
	return codeCacheName
}

// Load returns the cached data when the file is there, private and intact.
func (f *CodeCacheFile) Load() []byte {
	dir := f.dir()
	if dir == "" {
		return nil
	}
	data, err := readCodeCache(filepath.Join(dir, codeCacheFileName()))
	switch {
	case errors.Is(err, fs.ErrNotExist):
		f.missed.Add(1)
		return nil
	case err != nil:
		f.invalid.Add(1)
		f.logger.Warn("typecheck: code cache not used", "dir", dir, "err", err)
		return nil
	}
	return data
}

// Loaded counts V8's verdict on what Load returned.
func (f *CodeCacheFile) Loaded(accepted bool) {
	if accepted {
		f.loaded.Add(1)
		return
	}
	f.rejected.Add(1)
	f.logger.Info("typecheck: V8 rejected the code cache; it is made again", "dir", f.dir())
}

// Store writes data to the file (a new file renamed over the old one) and
// removes the caches of other compiler or V8 versions.
func (f *CodeCacheFile) Store(data []byte) {
	dir := f.dir()
	if dir == "" {
		return
	}
	if err := writeCodeCache(dir, data); err != nil {
		f.logger.Warn("typecheck: code cache not stored", "dir", dir, "err", err)
		return
	}
	f.stored.Add(1)
}

// readCodeCache reads and verifies a code cache file.
func readCodeCache(path string) ([]byte, error) {
	if err := private(filepath.Dir(path), true); err != nil {
		return nil, err
	}
	if err := private(path, false); err != nil { // not a symbolic link, either
		return nil, err
	}
	file, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer file.Close()
	fi, err := file.Stat()
	if err != nil {
		return nil, fmt.Errorf("reading the code cache: %w", err)
	}
	if err := privateInfo(fi, false); err != nil { // the file opened is private too
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if fi.Size() > maxCodeCacheBytes {
		return nil, fmt.Errorf("%s: %d bytes, more than a code cache takes", path, fi.Size())
	}
	raw, err := io.ReadAll(file)
	if err != nil {
		return nil, fmt.Errorf("reading the code cache: %w", err)
	}
	head := len(codeCacheMagic) + sha256.Size
	if len(raw) <= head || !bytes.HasPrefix(raw, []byte(codeCacheMagic)) {
		return nil, fmt.Errorf("%s: not a code cache file", path)
	}
	data := raw[head:]
	if sum := sha256.Sum256(data); !bytes.Equal(sum[:], raw[len(codeCacheMagic):head]) {
		return nil, fmt.Errorf("%s: damaged (SHA-256 mismatch)", path)
	}
	return data, nil
}

// writeCodeCache writes data to dir's code cache file.
func writeCodeCache(dir string, data []byte) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("making the code cache directory: %w", err)
	}
	if err := private(dir, true); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, ".typescript-*.tmp")
	if err != nil {
		return fmt.Errorf("writing the code cache: %w", err)
	}
	defer os.Remove(tmp.Name()) // after the rename, nothing
	sum := sha256.Sum256(data)
	_, err = tmp.Write(append(append([]byte(codeCacheMagic), sum[:]...), data...))
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("writing the code cache: %w", err)
	}
	name := codeCacheFileName()
	if err := os.Rename(tmp.Name(), filepath.Join(dir, name)); err != nil {
		return fmt.Errorf("writing the code cache: %w", err)
	}
	old, _ := filepath.Glob(filepath.Join(dir, "typescript-*.v8cache"))
	for _, p := range old {
		if filepath.Base(p) != name {
			os.Remove(p)
		}
	}
	return nil
}

// private checks that path is this user's and only this user may write
// it (a directory, when dir).
func private(path string, dir bool) error {
	fi, err := os.Lstat(path)
	if err != nil {
		return err
	}
	if err := privateInfo(fi, dir); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

func privateInfo(fi fs.FileInfo, dir bool) error {
	switch {
	case dir && !fi.IsDir():
		return errors.New("not a directory")
	case !dir && !fi.Mode().IsRegular():
		return errors.New("not a regular file")
	case fi.Mode().Perm()&0o022 != 0:
		return fmt.Errorf("writable by others (mode %v)", fi.Mode().Perm())
	case !ownedByMe(fi):
		return errors.New("owned by another user")
	}
	return nil
}
