package v8sandbox

// #cgo CXXFLAGS: -fno-rtti -fPIC -std=c++17 -O2 -Wall
// #include "strbytes.h"
import "C"

import (
	"reflect"
	"unicode/utf8"
	"unsafe"

	v8 "rogchap.com/v8go"
)

// stringBytes returns the UTF-8 bytes of v, a string value of iso, whose
// lock the caller holds, as v8go's String would give them, copied once
// straight into the returned slice. Text whose characters all fit in one
// byte (what JSON.stringify makes of ASCII or Latin-1 data, whether V8
// stores it one or two bytes per character) is copied a byte per character
// and widened to UTF-8 only if it has characters above U+007F; any other
// text is encoded to UTF-8 by V8 itself, into the slice. v8go's String
// (String::Utf8Value, then two more copies) took about 4 ms for a 1 MB
// result.
func stringBytes(iso *v8.Isolate, v *v8.Value) []byte {
	b, _ := copyString(iso, v)
	return b
}

// copyString is stringBytes, also saying how the bytes were copied
// ("latin1" or "utf8"), for the tests.
func copyString(iso *v8.Isolate, v *v8.Value) ([]byte, string) {
	iptr, vptr := rawIsolate(iso), rawValue(v)
	if n := int(C.isogate_latin1_length(iptr, vptr)); n >= 0 {
		b := make([]byte, n)
		if n > 0 {
			C.isogate_write_one_byte(iptr, vptr, (*C.uchar)(unsafe.Pointer(&b[0])), C.int(n))
		}
		return latin1ToUTF8(b), "latin1"
	}
	n := int(C.isogate_utf8_length(iptr, vptr))
	b := make([]byte, n)
	if n > 0 {
		C.isogate_write_utf8(iptr, vptr, (*C.char)(unsafe.Pointer(&b[0])), C.int(n))
	}
	return b, "utf8"
}

// latin1ToUTF8 returns b, Latin-1 text, as UTF-8: b itself when it is
// ASCII.
func latin1ToUTF8(b []byte) []byte {
	wide := 0
	for _, c := range b {
		if c >= utf8.RuneSelf {
			wide++
		}
	}
	if wide == 0 {
		return b
	}
	out := make([]byte, 0, len(b)+wide)
	for _, c := range b {
		out = utf8.AppendRune(out, rune(c))
	}
	return out
}

// rawValue returns the m_value* behind a v8go value (its unexported ptr
// field), which strbytes.cc reads.
func rawValue(v *v8.Value) unsafe.Pointer {
	f := reflect.ValueOf(v).Elem().FieldByName("ptr")
	return *(*unsafe.Pointer)(unsafe.Pointer(f.UnsafeAddr()))
}
