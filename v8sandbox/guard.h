// guard.h declares the small C interface of guard.cc: per-isolate heap and
// ArrayBuffer limits that rogchap.com/v8go does not expose.
#ifndef ISOGATE_GUARD_H
#define ISOGATE_GUARD_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct isogate_heap isogate_heap;
typedef struct isogate_budget isogate_budget;

// isogate_install_allocator swaps v8go's default ArrayBuffer allocator for a
// counting one. Call once, after the first isolate was created and disposed.
void isogate_install_allocator(void);

// isogate_budget_new returns a budget that lives for the whole process.
isogate_budget* isogate_budget_new(void);
// isogate_budget_bind makes b the budget charged for ArrayBuffer allocations
// made on the calling OS thread.
void isogate_budget_bind(isogate_budget* b);
void isogate_budget_set_limit(isogate_budget* b, int64_t limit_bytes);
int64_t isogate_budget_used(isogate_budget* b);

// isogate_heap_install caps the old generation of iso at limit_bytes and
// terminates execution when the cap is reached, or when a poll finds the
// used heap (all spaces) above hard_limit_bytes.
isogate_heap* isogate_heap_install(void* iso, size_t limit_bytes,
                                   size_t hard_limit_bytes);
int isogate_heap_hit(isogate_heap* h);
// isogate_heap_poll asks iso, from any thread, to compare its used heap with
// the hard limit at its next interrupt check. Call it only while iso is
// alive.
void isogate_heap_poll(isogate_heap* h);
// isogate_heap_check_now compares the used heap with the hard limit at once
// (no script may be running on iso); it returns 1, and marks the hit, when
// the limit is passed.
int isogate_heap_check_now(isogate_heap* h);

// isogate_heap_used returns the bytes of used heap (all spaces), the figure
// the hard limit is compared with.
size_t isogate_heap_used(isogate_heap* h);
void isogate_heap_free(isogate_heap* h);

// isogate_disallow_atomics_wait makes Atomics.wait throw instead of blocking.
void isogate_disallow_atomics_wait(void* iso);

// isogate_low_memory asks V8 for full collections now (tens of ms at most
// on a sandbox-sized heap): for isolates that sit idle.
void isogate_low_memory(void* iso);

#ifdef __cplusplus
}
#endif

#endif
