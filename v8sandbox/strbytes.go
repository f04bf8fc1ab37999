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
// lock the caller holds. A string V8 stores one byte per character (what
// JSON.stringify makes of ASCII or Latin-1 text) is copied once, straight
// into the returned slice, and widened to UTF-8 only if it has characters
// above U+007F; any other string is converted by v8go (String::Utf8Value,
// then two more copies). A 1 MB result took about 4 ms the v8go way.
func stringBytes(iso *v8.Isolate, v *v8.Value) []byte {
	iptr, vptr := rawIsolate(iso), rawValue(v)
	n := int(C.isogate_one_byte_length(iptr, vptr))
	if n < 0 {
		return []byte(v.String())
	}
	b := make([]byte, n)
	if n > 0 {
		C.isogate_write_one_byte(iptr, vptr, (*C.uchar)(unsafe.Pointer(&b[0])), C.int(n))
	}
	return latin1ToUTF8(b)
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
