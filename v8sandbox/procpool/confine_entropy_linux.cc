//go:build linux

// V8 seeds each isolate's random number generator (Math.random, hash seeds,
// address hints) when the isolate is created, by default from a fopen of
// /dev/urandom. A confined worker opens no file at all (seccomp refuses
// every openat, so that no open can tell whether a path exists), so the
// worker hands V8 an entropy source that asks the kernel directly:
// getrandom(2), which takes no path. Without it V8 would fall back to
// seeding from the clock.
//
// v8::V8::SetEntropySource is declared by hand (as v8sandbox/v8api.h does
// for the members it calls); the symbol is in v8go's libv8.a, linked through
// v8sandbox's blank import of v8go.

#include <errno.h>
#include <stddef.h>
#include <sys/random.h>

namespace v8 {
class V8 {
 public:
  typedef bool (*EntropySource)(unsigned char* buffer, size_t length);
  static void SetEntropySource(EntropySource source);
};
}  // namespace v8

namespace {

bool kernel_entropy(unsigned char* buffer, size_t length) {
  size_t got = 0;
  while (got < length) {
    ssize_t n = getrandom(buffer + got, length - got, 0);
    if (n < 0) {
      if (errno == EINTR) {
        continue;
      }
      return false;  // V8 then tries /dev/urandom, then the clock
    }
    got += static_cast<size_t>(n);
  }
  return true;
}

}  // namespace

extern "C" void isogate_set_entropy_source(void) {
  v8::V8::SetEntropySource(kernel_entropy);
}
