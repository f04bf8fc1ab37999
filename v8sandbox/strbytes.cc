// strbytes.cc copies a V8 string's bytes into memory the caller owns (see
// strbytes.go).

#include "strbytes.h"

#include "v8api.h"

namespace {

// v8go's m_value (v8go.cc): its Persistent holds the handle's location,
// which is what a v8::String* is to the API.
struct v8go_value {
  long id;
  v8::Isolate* iso;
  void* ctx;
  void* location;
};

const v8::String* stringOf(void* value) {
  return reinterpret_cast<const v8::String*>(
      static_cast<v8go_value*>(value)->location);
}

}  // namespace

extern "C" {

int isogate_latin1_length(void* iso, void* value) {
  v8::HandleScope scope(static_cast<v8::Isolate*>(iso));
  const v8::String* s = stringOf(value);
  // V8 often stores text that is all Latin-1 two bytes per character (the
  // strings JSON.parse makes, and what JSON.stringify builds from them):
  // ContainsOnlyOneByte scans it, much faster than encoding it.
  return s->IsOneByte() || s->ContainsOnlyOneByte() ? s->Length() : -1;
}

void isogate_write_one_byte(void* iso, void* value, unsigned char* dst,
                            int n) {
  v8::HandleScope scope(static_cast<v8::Isolate*>(iso));
  stringOf(value)->WriteOneByte(static_cast<v8::Isolate*>(iso), dst, 0, n,
                                v8::String::NO_NULL_TERMINATION);
}

int isogate_utf8_length(void* iso, void* value) {
  v8::HandleScope scope(static_cast<v8::Isolate*>(iso));
  return stringOf(value)->Utf8Length(static_cast<v8::Isolate*>(iso));
}

void isogate_write_utf8(void* iso, void* value, char* dst, int n) {
  v8::HandleScope scope(static_cast<v8::Isolate*>(iso));
  stringOf(value)->WriteUtf8(static_cast<v8::Isolate*>(iso), dst, n, nullptr,
                             v8::String::NO_NULL_TERMINATION);
}

}  // extern "C"
