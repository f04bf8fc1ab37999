package v8sandbox

import (
	"bytes"
	"runtime"
	"testing"
	"time"

	v8 "rogchap.com/v8go"
)

// lockedContext is a fresh isolate and context, locked for this goroutine,
// which stays on its OS thread until the test ends.
func lockedContext(t *testing.T) (*v8.Isolate, *v8.Context) {
	runtime.LockOSThread()
	initV8()
	iso := v8.NewIsolate()
	ctx := v8.NewContext(iso)
	lock := lockIsolate(iso)
	t.Cleanup(func() {
		lock.release()
		ctx.Close()
		iso.Dispose()
		runtime.UnlockOSThread()
	})
	return iso, ctx
}

// stringBytes gives the bytes v8go's String gives, for every kind of string
// V8 stores: one byte per character (ASCII, Latin-1), two (beyond U+00FF,
// lone surrogates), flat or built from parts (a cons string), empty.
func TestStringBytesMatchesV8go(t *testing.T) {
	iso, ctx := lockedContext(t)
	for _, src := range []string{
		`""`, `"null"`, `JSON.stringify({a: [1, "x"], b: null})`,
		`"caf\u00e9 \u00ff \u0080 \u00a0"`, `"\u20ac \u{1f600} \u4e2d"`, `"a\ud800b"`, `"\udfff"`,
		`"x".repeat(1 << 20)`, `"a".repeat(3000) + "\u00e9".repeat(3000)`, `"a".repeat(3000) + "\u20ac"`,
		`JSON.stringify(["\u00e9", "\u0000", "\ud800", "\u2028"])`, `"nul\u0000inside"`,
		`JSON.stringify(JSON.parse('{"name":"item 0","s":"caf\u00e9"}'))`, `JSON.stringify(JSON.parse('["\u20ac", "x"]'))`,
		`JSON.stringify(JSON.parse('["\\ud800 lone"]'))`,
		`"\u20ac\u0000x"`, `"\u20ac".repeat(1 << 19) + "\ud83d"`,
	} {
		v, err := ctx.RunScript(src, "strbytes.js")
		if err != nil {
			t.Fatalf("%s: %v", src, err)
		}
		want := []byte(v.String())
		if got := stringBytes(iso, v); !bytes.Equal(got, want) {
			t.Errorf("%s: got %.80q (%d bytes), want %.80q (%d bytes)", src, got, len(got), want, len(want))
		}
	}
}

// Text whose characters all fit in one byte is copied a byte per
// character even when V8 stores it two bytes per character, as it does the
// strings JSON.parse makes and what JSON.stringify builds from them (a
// program returning a tool's parsed result); only other text is encoded to
// UTF-8.
func TestStringBytesCopiesLatin1TextByteForByte(t *testing.T) {
	iso, ctx := lockedContext(t)
	for src, want := range map[string]string{
		`JSON.parse('{"name":"item 0"}').name`:                               "latin1",
		`JSON.stringify(JSON.parse('{"items":[{"id":1,"name":"item 1"}]}'))`: "latin1",
		`JSON.stringify(JSON.parse('["caf\u00e9"]'))`:                        "latin1",
		`"x".repeat(100)`:                          "latin1",
		`JSON.stringify(JSON.parse('["\u20ac"]'))`: "utf8",
		`"\u{1f600}"`:                              "utf8",
	} {
		v, err := ctx.RunScript(src, "strbytes.js")
		if err != nil {
			t.Fatalf("%s: %v", src, err)
		}
		got, how := copyString(iso, v)
		if how != want {
			t.Errorf("%s: copied as %s, want %s", src, how, want)
		}
		if !bytes.Equal(got, []byte(v.String())) {
			t.Errorf("%s: got %q, want %q", src, got, v.String())
		}
	}
}

// BenchmarkStringBytes copies a 1 MB JSON.stringify result of parsed
// records (what a program returning a tool's result hands back) out of V8:
// v8go's String beside stringBytes, alternated, each reported apart.
//
//	go test -run '^$' -bench StringBytes -benchtime 100x ./v8sandbox/
func BenchmarkStringBytes(b *testing.B) {
	// Not lockedContext: a benchmark's cleanups may run on another thread.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	initV8()
	iso := v8.NewIsolate()
	defer iso.Dispose()
	ctx := v8.NewContext(iso)
	defer ctx.Close()
	lock := lockIsolate(iso)
	defer lock.release()
	fresh, err := ctx.RunScript(`const items = [];
for (let i = 0; i < 14000; i++) items.push({id: i, name: "item " + i, price: i + 0.5, tags: ["a", "b"], ok: true});
const parsed = JSON.parse(JSON.stringify({items}));
() => JSON.stringify(parsed)`, "records.js")
	if err != nil {
		b.Fatal(err)
	}
	stringify, err := fresh.AsFunction()
	if err != nil {
		b.Fatal(err)
	}
	// Each copy gets a result of its own, fresh from JSON.stringify (a
	// string built from parts, which the first copy flattens), made outside
	// the timing; the two copies alternate, each timed on its own, on one
	// goroutine throughout (it holds the isolate's lock).
	result := func() *v8.Value {
		v, err := stringify.Call(v8.Undefined(iso))
		if err != nil {
			b.Fatal(err)
		}
		return v
	}
	var v8goTime, ownTime time.Duration
	for b.Loop() {
		b.StopTimer()
		v1, v2 := result(), result()
		b.StartTimer()
		t0 := time.Now()
		old := []byte(v1.String())
		t1 := time.Now()
		own := stringBytes(iso, v2)
		v8goTime, ownTime = v8goTime+t1.Sub(t0), ownTime+time.Since(t1)
		if len(old) != len(own) {
			b.Fatalf("%d bytes, v8go gives %d", len(own), len(old))
		}
		v1.Release()
		v2.Release()
	}
	b.ReportMetric(float64(v8goTime.Microseconds())/float64(b.N), "v8go-µs/op")
	b.ReportMetric(float64(ownTime.Microseconds())/float64(b.N), "stringBytes-µs/op")
}
