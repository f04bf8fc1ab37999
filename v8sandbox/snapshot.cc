// snapshot.cc makes a V8 startup snapshot and isolates from it (see
// snapshot.go). v8go v0.9.0 has no snapshot API: the V8 members are
// declared by hand in v8api.h, and the isolate is set up the way v8go's
// NewIsolate sets up its own, with v8go's exported C functions, so that
// every v8go call works on it.

#include "snapshot.h"

#include "v8api.h"

// Defined by v8go (v8go.cc) and used for every isolate it creates.
extern v8::ArrayBuffer::Allocator* default_allocator;

// v8go's own C interface (v8go.h), for its internal context and values.
struct m_ctx;
struct m_value;
struct m_template;
extern "C" {
m_ctx* NewContext(v8::Isolate* iso, m_template* global_template, int ref);
m_value* NewValueNull(v8::Isolate* iso);
m_value* NewValueUndefined(v8::Isolate* iso);
}

struct isogate_snapshot {
  v8::StartupData blob;
};

extern "C" {

isogate_snapshot* isogate_snapshot_create(const char* source,
                                          const char* warmup) {
  v8::StartupData cold = v8::internal::CreateSnapshotDataBlobInternal(
      v8::SnapshotCreator::FunctionCodeHandling::kClear, source, nullptr);
  if (cold.data == nullptr || cold.raw_size == 0) return nullptr;
  v8::StartupData warm =
      v8::internal::WarmUpSnapshotDataBlobInternal(cold, warmup);
  delete[] cold.data;
  if (warm.data == nullptr || warm.raw_size == 0) return nullptr;
  return new isogate_snapshot{warm};
}

int isogate_snapshot_size(isogate_snapshot* s) { return s->blob.raw_size; }

const char* isogate_snapshot_data(isogate_snapshot* s) { return s->blob.data; }

isogate_snapshot* isogate_snapshot_wrap(const char* data, int size) {
  return new isogate_snapshot{v8::StartupData{data, size}};
}

void* isogate_isolate_from_snapshot(isogate_snapshot* s, void** null_value,
                                    void** undefined_value) {
  v8::Isolate::CreateParams params;
  params.snapshot_blob = &s->blob;
  params.array_buffer_allocator = default_allocator;
  v8::Isolate* iso = v8::Isolate::New(params);
  {
    IsolateEntered entered(iso);
    iso->SetCaptureStackTraceForUncaughtExceptions(
        true, 10, v8::StackTrace::kOverview);
  }
  // v8go's NewIsolate keeps a context for internal use in slot 0; NewContext
  // takes the isolate's lock itself.
  iso->SetData(0, NewContext(iso, nullptr, 0));
  *null_value = NewValueNull(iso);
  *undefined_value = NewValueUndefined(iso);
  return iso;
}

}  // extern "C"
