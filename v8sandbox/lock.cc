// lock.cc holds an isolate's lock across many v8go calls (see lock.go).

#include "lock.h"

#include "v8api.h"

struct isogate_lock {
  explicit isogate_lock(v8::Isolate* i) : entered(i) {}
  IsolateEntered entered;
};

extern "C" {

isogate_lock* isogate_lock_take(void* iso) {
  return new isogate_lock(static_cast<v8::Isolate*>(iso));
}

void isogate_lock_release(isogate_lock* l) { delete l; }

}  // extern "C"
