// lock.h declares the C interface of lock.cc: holding an isolate's lock
// across many v8go calls.
#ifndef ISOGATE_LOCK_H
#define ISOGATE_LOCK_H

#ifdef __cplusplus
extern "C" {
#endif

typedef struct isogate_lock isogate_lock;

// isogate_lock_take takes iso's v8::Locker on the calling thread and enters
// the isolate. v8go's calls made on this thread until isogate_lock_release
// nest in it.
isogate_lock* isogate_lock_take(void* iso);
// isogate_lock_release exits the isolate and releases the lock, on the
// thread that took it.
void isogate_lock_release(isogate_lock* l);

#ifdef __cplusplus
}
#endif

#endif
