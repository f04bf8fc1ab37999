package v8sandbox

import (
	"bytes"
	"runtime"
	"testing"

	v8 "rogchap.com/v8go"
)

// stringBytes gives the bytes v8go's String gives, for every kind of string
// V8 stores: one byte per character (ASCII, Latin-1), two (beyond U+00FF,
// lone surrogates), flat or built from parts (a cons string), empty.
func TestStringBytesMatchesV8go(t *testing.T) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	initV8()
	iso := v8.NewIsolate()
	defer iso.Dispose()
	ctx := v8.NewContext(iso)
	defer ctx.Close()
	lock := lockIsolate(iso)
	defer lock.release()
	for _, src := range []string{
		`""`, `"null"`, `JSON.stringify({a: [1, "x"], b: null})`,
		`"caf\u00e9 \u00ff \u0080 \u00a0"`, `"\u20ac \u{1f600} \u4e2d"`, `"a\ud800b"`, `"\udfff"`,
		`"x".repeat(1 << 20)`, `"a".repeat(3000) + "\u00e9".repeat(3000)`, `"a".repeat(3000) + "\u20ac"`,
		`JSON.stringify(["\u00e9", "\u0000", "\ud800", "\u2028"])`, `"nul\u0000inside"`,
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
