package v8sandbox

// #cgo CXXFLAGS: -fno-rtti -fPIC -std=c++17 -O2 -Wall
// #include <stdlib.h>
// #include "snapshot.h"
import "C"

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"reflect"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"unsafe"

	v8 "rogchap.com/v8go"
)

// The startup snapshot: every isolate of the process starts from one blob
// whose default context already ran bootstrap.js and the scripts given to
// [AddStartupScript], so a fresh context costs a deserialization instead
// of JavaScript evaluation. It is made once per process, at the first
// isolate (tens of milliseconds), from the scripts this binary embeds: the
// binary is its key (V8's version and every script are fixed in it).
var (
	startupMu      sync.Mutex
	startupScripts []string
	startupWarmups []string
	startupOnce    sync.Once
	startupBuilt   bool
	startupSnap    *snapshot // nil when disabled or when making it failed

	// snapshotOff makes new isolates without the snapshot (benchmarks and
	// tests compare; set it only while no isolate is being made). The
	// process starts with it set when SnapshotEnv is "off".
	snapshotOff = os.Getenv(SnapshotEnv) == "off"

	// snapshotsMade counts the snapshots this process made (tests).
	snapshotsMade atomic.Int32
)

// SnapshotEnv is the environment variable that, set to "off" when a process
// starts, makes every isolate of that process start without the startup
// snapshot: each context then runs the bootstrap and the startup scripts
// itself. It is a diagnostic switch (and the benchmark's way of measuring
// the snapshot's gain); it applies to the whole process, because every
// isolate of a process must start from the same blob (V8 shares their
// read-only heap).
const SnapshotEnv = "ISOGATE_V8_SNAPSHOT"

// AddStartupScript adds a trusted script to the startup snapshot every
// isolate starts from, after bootstrap.js, and a warm-up script: it runs
// when the snapshot is made, in a throwaway context after the bootstrap's
// own warm-up (host functions installed, then a prelude's place), so that
// the functions it calls are compiled in the snapshot instead of in every
// context; nothing it does is kept but that code. It runs once per process, in
// sloppy mode at the top level of a context that no job code has touched:
// it should keep its declarations in a function scope and leave at most a
// few configurable globals, each named with __isogate_trust(name) so that
// they are removed after the prelude and job code never sees them. Call it
// from an init function: scripts added after the first isolate was made
// are not in the snapshot, and AddStartupScript panics.
func AddStartupScript(script, warmup string) {
	startupMu.Lock()
	defer startupMu.Unlock()
	if startupBuilt {
		panic("v8sandbox: AddStartupScript after the first isolate was created")
	}
	startupScripts = append(startupScripts, script)
	startupWarmups = append(startupWarmups, warmup)
}

// bootstrapWarmup calls what bootstrap.js defines the way a run does, so
// their code is compiled in the snapshot: host functions (sync, async,
// dotted), a prelude's serializer hook, the seal, both helpers.
const bootstrapWarmup = `globalThis.__isogate_warm = __isogate_bootstrap(
	(name, args) => ({ ok: true, value: JSON.parse(args) }),
	(name, args) => Promise.resolve({ ok: false, error: { name: "E", message: "m", code: "c" } }),
	[{ name: "warm.sync" }, { name: "warmAsync", async: true }]);
warm.sync(1, "two", { three: [3] });
warmAsync().catch(() => {});
`

// bootstrapWarmupEnd runs after the trusted scripts' warm-ups (where a
// prelude would run): the seal, then the helpers as a run's end uses them.
const bootstrapWarmupEnd = `{
	const [serialize, describe, seal] = __isogate_warm;
	seal();
	serialize({ a: [1, "x", null, { b: true }], m: new Map([["k", 1]]), e: new Error("x") });
	serialize(undefined);
	describe(new TypeError("x"));
	describe("plain");
}
`

// startupSource is what the snapshot's default context ran, and what a
// context made without the snapshot runs first.
func startupSource() string {
	startupMu.Lock()
	defer startupMu.Unlock()
	startupBuilt = true
	return bootstrapJS + "\n" + strings.Join(startupScripts, "\n") + "\ndelete globalThis.__isogate_trust;\n"
}

// startupWarmup is the warm-up run when the snapshot is made.
func startupWarmup() string {
	startupMu.Lock()
	defer startupMu.Unlock()
	return bootstrapWarmup + strings.Join(startupWarmups, "\n") + "\n" + bootstrapWarmupEnd
}

// sharedSnapshot returns the process's startup snapshot, made on first use;
// nil when isolates start without one.
func sharedSnapshot(logger *slog.Logger) *snapshot {
	if snapshotOff {
		return nil
	}
	startupOnce.Do(func() {
		s, err := newSnapshot(startupSource(), startupWarmup())
		if err != nil {
			logger.Error("V8 startup snapshot unavailable: contexts run the bootstrap themselves", "err", err)
			return
		}
		startupSnap = s
		logger.Debug("V8 startup snapshot made", "bytes", s.size())
	})
	return startupSnap
}

// A process can hand its startup snapshot to another process of the same
// binary: making one costs tens of milliseconds of CPU (the scripts run,
// the warm-up compiles, the heap is serialized twice), deserializing one a
// few. The exported blob starts with snapshotKey, a digest of V8's version
// and of every startup script, so that a blob from another build is
// refused instead of given to V8 (which aborts on a blob it cannot read).

// StartupKey identifies the startup snapshot of this binary: a digest of
// V8's version and of every startup script. Two processes whose keys are
// equal start their isolates from the same state. Call it after every
// [AddStartupScript] (from init functions).
func StartupKey() []byte { return snapshotKey() }

// snapshotKey identifies this binary's startup snapshot.
var snapshotKey = sync.OnceValue(func() []byte {
	h := sha256.New()
	h.Write([]byte(v8.Version()))
	h.Write([]byte{0})
	h.Write([]byte(startupSource()))
	h.Write([]byte{0})
	h.Write([]byte(startupWarmup()))
	return h.Sum(nil)
})

// StartupSnapshot returns this process's startup snapshot, making it now
// if no isolate has made it yet, as a blob that [UseStartupSnapshot] takes
// in another process of this same binary; nil when isolates start without
// a snapshot (it is off, or making it failed). Call it before the process
// runs any untrusted code: the blob carries the heap of this process's
// isolates' starting point.
func StartupSnapshot() []byte {
	initV8()
	s := sharedSnapshot(slog.Default())
	if s == nil {
		return nil
	}
	data := C.GoBytes(unsafe.Pointer(C.isogate_snapshot_data(s.s)), C.int(s.size()))
	key := snapshotKey()
	return append(append(make([]byte, 0, len(key)+len(data)), key...), data...)
}

// UseStartupSnapshot makes this process's isolates start from blob, a
// [StartupSnapshot] of another process of this same binary, instead of
// making the snapshot themselves. It must be called before the first
// isolate; it returns an error, and changes nothing, when the snapshot is
// off or made already, or when blob was made by another build.
func UseStartupSnapshot(blob []byte) error {
	if snapshotOff {
		return errors.New("the startup snapshot is off")
	}
	key := snapshotKey()
	if len(blob) <= len(key) || !bytes.Equal(blob[:len(key)], key) {
		return errors.New("the startup snapshot was made by another build (V8 or startup scripts differ)")
	}
	used := false
	startupOnce.Do(func() {
		data := blob[len(key):]
		// Kept for the whole process: every isolate reads it.
		c := C.CBytes(data)
		startupSnap = &snapshot{C.isogate_snapshot_wrap((*C.char)(c), C.int(len(data)))}
		used = true
	})
	if !used {
		return errors.New("the startup snapshot was made already")
	}
	return nil
}

// snapshot is a V8 startup blob whose default context already ran a script.
type snapshot struct{ s *C.isogate_snapshot }

// newSnapshot runs source in a fresh context and serializes it, with the
// code warmup compiles in a throwaway context of it. The blob lives as long
// as the process (isolates made from it read it).
func newSnapshot(source, warmup string) (*snapshot, error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	cs, cw := C.CString(source), C.CString(warmup)
	defer C.free(unsafe.Pointer(cs))
	defer C.free(unsafe.Pointer(cw))
	s := C.isogate_snapshot_create(cs, cw)
	snapshotsMade.Add(1)
	if s == nil {
		return nil, fmt.Errorf("creating the V8 startup snapshot: the script failed")
	}
	return &snapshot{s}, nil
}

// size is the blob's length in bytes.
func (s *snapshot) size() int { return int(C.isogate_snapshot_size(s.s)) }

// newIsolate creates an isolate whose contexts start from the snapshot and
// wraps it as a v8go isolate: v8go creates isolates only from V8's built-in
// snapshot, so its unexported fields are filled in as its NewIsolate does
// (the pointer, the callback table, the null and undefined values).
func (s *snapshot) newIsolate() *v8.Isolate {
	var null, undefined unsafe.Pointer
	ptr := C.isogate_isolate_from_snapshot(s.s, &null, &undefined)
	iso := new(v8.Isolate)
	f := reflect.ValueOf(iso).Elem()
	setUnexported(f.FieldByName("ptr"), ptr)
	cbs := f.FieldByName("cbs")
	reflect.NewAt(cbs.Type(), unsafe.Pointer(cbs.UnsafeAddr())).Elem().Set(reflect.MakeMap(cbs.Type()))
	setUnexported(f.FieldByName("null"), unsafe.Pointer(wrapValue(null)))
	setUnexported(f.FieldByName("undefined"), unsafe.Pointer(wrapValue(undefined)))
	return iso
}

// wrapValue returns a v8go Value holding a v8go value pointer.
func wrapValue(ptr unsafe.Pointer) *v8.Value {
	v := new(v8.Value)
	setUnexported(reflect.ValueOf(v).Elem().FieldByName("ptr"), ptr)
	return v
}

// setUnexported stores a pointer into an unexported pointer-shaped field.
func setUnexported(f reflect.Value, p unsafe.Pointer) {
	if !f.IsValid() || f.Type().Size() != unsafe.Sizeof(p) {
		panic("v8sandbox: rogchap.com/v8go's layout changed; the snapshot isolate needs v0.9.0's")
	}
	*(*unsafe.Pointer)(unsafe.Pointer(f.UnsafeAddr())) = p
}
