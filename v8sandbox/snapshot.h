// snapshot.h declares the C interface of snapshot.cc: a V8 startup snapshot
// holding isogate's bootstrap, and isolates created from it in the shape
// v8go expects of its own.
#ifndef ISOGATE_SNAPSHOT_H
#define ISOGATE_SNAPSHOT_H

#ifdef __cplusplus
extern "C" {
#endif

typedef struct isogate_snapshot isogate_snapshot;

// isogate_snapshot_create runs source in a fresh context of a new isolate
// and serializes that context as the default context of a startup blob;
// then warmup runs in a throwaway context made from it, and the blob is
// made again with the code the warm-up compiled (none of its state). It
// returns null when a script throws (V8 prints why on stderr). The
// snapshot lives for the whole process.
isogate_snapshot* isogate_snapshot_create(const char* source,
                                          const char* warmup);
int isogate_snapshot_size(isogate_snapshot* s);
const char* isogate_snapshot_data(isogate_snapshot* s);

// isogate_snapshot_wrap makes a snapshot of a blob made by
// isogate_snapshot_create in another process of this same binary; data
// (size bytes) must live for the whole process.
isogate_snapshot* isogate_snapshot_wrap(const char* data, int size);

// isogate_isolate from_snapshot creates an isolate whose contexts start
// from s's default context, set up as v8go's NewIsolate sets up its own
// (stack traces for uncaught exceptions, an internal context in data slot
// 0). It also returns the isolate's null and undefined values, which v8go
// keeps on its Isolate.
void* isogate_isolate_from_snapshot(isogate_snapshot* s, void** null_value,
                                    void** undefined_value);

#ifdef __cplusplus
}
#endif

#endif
