// v8api.h declares, by hand, the few V8 members isogate's C++ calls, so
// that a plain `go build` works without V8's headers on the include path.
// The layouts and mangled names match the prebuilt libv8.a shipped in
// rogchap.com/v8go v0.9.0 (V8 10.9).
#ifndef ISOGATE_V8API_H
#define ISOGATE_V8API_H

#include <stddef.h>
#include <stdint.h>

namespace v8 {

class Isolate;

// Same layout as V8 10.9's v8::StartupData (v8-snapshot.h): a serialized
// heap, returned by value in registers.
struct StartupData {
  const char* data;
  int raw_size;
  bool IsValid() const;
  bool CanBeRehashed() const;
};

class SnapshotCreator {
 public:
  enum class FunctionCodeHandling { kClear, kKeep };
};

namespace internal {
// Defined in V8's snapshot.cc (what mksnapshot's --embed-script uses): a
// fresh isolate runs embedded_source in a new context, which becomes the
// blob's default context. isolate may be null (one is allocated).
StartupData CreateSnapshotDataBlobInternal(
    SnapshotCreator::FunctionCodeHandling function_code_handling,
    const char* embedded_source, Isolate* isolate);
// Also from snapshot.cc: runs warmup_source in a throwaway context made from
// cold_snapshot_blob, then serializes a fresh context of that blob again,
// keeping the code the warm-up compiled (not its state).
StartupData WarmUpSnapshotDataBlobInternal(StartupData cold_snapshot_blob,
                                           const char* warmup_source);
}  // namespace internal

class StackTrace {
 public:
  enum StackTraceOptions { kOverview = 15 };
};

using NearHeapLimitCallback = size_t (*)(void* data, size_t current_heap_limit,
                                         size_t initial_heap_limit);

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

// Same layout as V8 10.9's v8::HeapSpaceStatistics (v8-statistics.h).
class HeapSpaceStatistics {
 public:
  HeapSpaceStatistics();
  size_t space_used_size() { return space_used_size_; }

 private:
  const char* space_name_;
  size_t space_size_;
  size_t space_used_size_;
  size_t space_available_size_;
  size_t physical_space_size_;
};

class Isolate {
 public:
  // Same layout as V8 10.9's v8::Isolate::CreateParams (v8-isolate.h):
  // 152 bytes, snapshot_blob at 56, array_buffer_allocator at 88 (read off
  // the constructor in libv8.a). Fields isogate does not set are opaque.
  struct CreateParams {
    CreateParams();
    ~CreateParams();
    CreateParams(const CreateParams&) = delete;
    void operator=(const CreateParams&) = delete;

    void* code_event_handler;
    size_t constraints[6];  // ResourceConstraints
    const StartupData* snapshot_blob;
    void* counter_lookup_callback;
    void* create_histogram_callback;
    void* add_histogram_sample_callback;
    void* array_buffer_allocator;  // ArrayBuffer::Allocator*
    void* array_buffer_allocator_shared[2];  // std::shared_ptr
    const long* external_references;
    bool allow_atomics_wait;
    bool only_terminate_in_safe_scope;
    int embedder_wrapper_type_index;
    int embedder_wrapper_object_index;
    void* fatal_error_callback;
    void* oom_error_callback;
  };

  static Isolate* New(const CreateParams& params);
  void SetCaptureStackTraceForUncaughtExceptions(
      bool capture, int frame_limit, StackTrace::StackTraceOptions options);
  // SetData is inline in V8's headers: slot i of the embedder data that
  // starts kEmbedderDataOffset bytes into the isolate (Internals::
  // kIsolateEmbedderDataOffset for this build: pointer compression and the
  // sandbox on, as v8go compiles).
  static constexpr size_t kEmbedderDataOffset = 184;
  void SetData(unsigned slot, void* data) {
    reinterpret_cast<void**>(reinterpret_cast<char*>(this) +
                             kEmbedderDataOffset)[slot] = data;
  }
  void RequestInterrupt(InterruptCallback callback, void* data);
  void GetHeapStatistics(HeapStatistics* heap_statistics);
  size_t NumberOfHeapSpaces();
  bool GetHeapSpaceStatistics(HeapSpaceStatistics* space_statistics,
                              size_t index);
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

// Same layout as V8 10.9's v8::HandleScope (v8-local-handle.h).
class HandleScope {
 public:
  explicit HandleScope(Isolate* isolate);
  ~HandleScope();
  HandleScope(const HandleScope&) = delete;
  void operator=(const HandleScope&) = delete;

 private:
  void* i_isolate_;
  void* prev_next_;
  void* prev_limit_;
};

// The v8::String members isogate calls (v8-primitive.h). As for every API
// type, `this` is a handle's location: the address a Local or Persistent
// holds.
class String {
 public:
  enum WriteOptions { NO_OPTIONS = 0, NO_NULL_TERMINATION = 2 };
  int Length() const;
  bool IsOneByte() const;
  bool ContainsOnlyOneByte() const;
  int Utf8Length(Isolate* isolate) const;
  int WriteOneByte(Isolate* isolate, unsigned char* buffer, int start = 0,
                   int length = -1, int options = NO_OPTIONS) const;
  int WriteUtf8(Isolate* isolate, char* buffer, int length = -1,
                int* nchars_ref = nullptr, int options = NO_OPTIONS) const;
};

static_assert(sizeof(HandleScope) == 24, "HandleScope layout");
static_assert(sizeof(Isolate::CreateParams) == 152, "CreateParams layout");
static_assert(offsetof(Isolate::CreateParams, snapshot_blob) == 56,
              "CreateParams layout");
static_assert(offsetof(Isolate::CreateParams, array_buffer_allocator) == 88,
              "CreateParams layout");
static_assert(sizeof(StartupData) == 16, "StartupData layout");

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
