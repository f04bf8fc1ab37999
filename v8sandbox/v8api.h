// v8api.h declares, by hand, the few V8 members isogate's C++ calls, so
// that a plain `go build` works without V8's headers on the include path.
// The layouts and mangled names match the prebuilt libv8.a shipped in
// rogchap.com/v8go v0.9.0 (V8 10.9).
#ifndef ISOGATE_V8API_H
#define ISOGATE_V8API_H

#include <stddef.h>

namespace v8 {

using NearHeapLimitCallback = size_t (*)(void* data, size_t current_heap_limit,
                                         size_t initial_heap_limit);

class Isolate;
using InterruptCallback = void (*)(Isolate* isolate, void* data);

// Same layout as V8 10.9's v8::HeapStatistics (v8-statistics.h).
class HeapStatistics {
 public:
  HeapStatistics();
  size_t used_heap_size() { return used_heap_size_; }

 private:
  size_t total_heap_size_;
  size_t total_heap_size_executable_;
  size_t total_physical_size_;
  size_t total_available_size_;
  size_t used_heap_size_;
  size_t heap_size_limit_;
  size_t malloced_memory_;
  size_t external_memory_;
  size_t peak_malloced_memory_;
  bool does_zap_garbage_;
  size_t number_of_native_contexts_;
  size_t number_of_detached_contexts_;
  size_t total_global_handles_size_;
  size_t used_global_handles_size_;
};

class Isolate {
 public:
  void RequestInterrupt(InterruptCallback callback, void* data);
  void GetHeapStatistics(HeapStatistics* heap_statistics);
  void AddNearHeapLimitCallback(NearHeapLimitCallback callback, void* data);
  void RemoveNearHeapLimitCallback(NearHeapLimitCallback callback,
                                   size_t heap_limit);
  void TerminateExecution();
  void SetAllowAtomicsWait(bool allow);
  void LowMemoryNotification();
  void Enter();
  void Exit();
};

// Same layout as V8 10.9's v8::Locker (v8-locker.h).
class Locker {
 public:
  explicit Locker(Isolate* isolate) { Initialize(isolate); }
  ~Locker();
  Locker(const Locker&) = delete;
  void operator=(const Locker&) = delete;

 private:
  void Initialize(Isolate* isolate);
  bool has_lock_;
  bool top_level_;
  void* isolate_;
};

class ArrayBuffer {
 public:
  class Allocator {
   public:
    virtual ~Allocator() = default;
    virtual void* Allocate(size_t length) = 0;
    virtual void* AllocateUninitialized(size_t length) = 0;
    virtual void Free(void* data, size_t length) = 0;
    virtual void* Reallocate(void* data, size_t old_length, size_t new_length);
  };
};

}  // namespace v8

// IsolateEntered takes an isolate's lock on the calling thread and enters
// the isolate for its lifetime, as v8go does around each of its calls.
struct IsolateEntered {
  explicit IsolateEntered(v8::Isolate* i) : iso(i), locker(i) { iso->Enter(); }
  ~IsolateEntered() { iso->Exit(); }
  IsolateEntered(const IsolateEntered&) = delete;
  void operator=(const IsolateEntered&) = delete;

  v8::Isolate* iso;
  v8::Locker locker;
};

#endif
