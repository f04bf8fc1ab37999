package v8sandbox

// #include <stdlib.h>
//
// // v8go's own C function (v8go.cc), declared as v8go.h does: a JSON text,
// // NUL-terminated, parsed in a context. The result is tracked by the
// // context like every v8go value; the error's strings are malloc'd.
// typedef struct { const char* msg; const char* location; const char* stack; } isogate_rtn_error;
// typedef struct { void* value; isogate_rtn_error error; } isogate_rtn_value;
// extern isogate_rtn_value JSONParse(void* ctx, const char* str);
import "C"

import (
	"reflect"
	"unsafe"

	v8 "rogchap.com/v8go"
)

// parseTerminated parses a JSON text in ctx, as v8go.JSONParse does, from
// text that ends with a NUL byte (see [terminatedJSON]): V8 reads the Go
// bytes themselves into its string, the one copy. v8go.JSONParse first
// copies its argument to C memory (C.CString), which for a megabyte of
// tool result is a megabyte allocated, copied and freed for nothing.
func parseTerminated(ctx *v8.Context, text []byte) (*v8.Value, error) {
	if len(text) == 0 || text[len(text)-1] != 0 {
		panic("v8sandbox: parseTerminated needs NUL-terminated text")
	}
	rtn := C.JSONParse(contextPtr(ctx), (*C.char)(unsafe.Pointer(&text[0])))
	if rtn.value == nil {
		e := &v8.JSError{Message: C.GoString(rtn.error.msg), Location: C.GoString(rtn.error.location),
			StackTrace: C.GoString(rtn.error.stack)}
		C.free(unsafe.Pointer(rtn.error.msg))
		C.free(unsafe.Pointer(rtn.error.location))
		C.free(unsafe.Pointer(rtn.error.stack))
		return nil, e
	}
	v := wrapValue(rtn.value)
	setUnexported(reflect.ValueOf(v).Elem().FieldByName("ctx"), unsafe.Pointer(ctx))
	return v, nil
}

// contextPtr returns v8go's C context behind ctx (its unexported ptr).
func contextPtr(ctx *v8.Context) unsafe.Pointer {
	f := reflect.ValueOf(ctx).Elem().FieldByName("ptr")
	if !f.IsValid() || f.Type().Size() != unsafe.Sizeof(uintptr(0)) {
		panic("v8sandbox: v8go's Context changed: no pointer field ptr")
	}
	return *(*unsafe.Pointer)(unsafe.Pointer(f.UnsafeAddr()))
}

// terminatedJSON returns the JSON texts parts joined, followed by a NUL
// byte, in one allocation: what [parseTerminated] reads.
func terminatedJSON(parts ...[]byte) []byte {
	n := 1
	for _, p := range parts {
		n += len(p)
	}
	b := make([]byte, 0, n)
	for _, p := range parts {
		b = append(b, p...)
	}
	return append(b, 0)
}
