// guard.cc adds the limits v8go lacks: a near-heap-limit callback that
// terminates a script instead of letting V8 abort the process, and a counting
// ArrayBuffer allocator so buffer memory (outside the JS heap) is bounded too.
//
// The V8 members it calls are declared by hand in v8api.h.

#include "guard.h"

#include <atomic>
#include <cstring>

#include "v8api.h"

// Defined by v8go (v8go.cc) and used for every isolate it creates.
extern v8::ArrayBuffer::Allocator* default_allocator;

struct isogate_budget {
  std::atomic<int64_t> used{0};
  std::atomic<int64_t> limit{0};
};

namespace {

thread_local isogate_budget* current_budget = nullptr;

// Every block carries a header naming the budget it was charged to, so a
// block freed on another thread (or after a rebind) is credited correctly.
struct alignas(16) BlockHeader {
  isogate_budget* budget;
  size_t length;
};

class CountingAllocator : public v8::ArrayBuffer::Allocator {
 public:
  explicit CountingAllocator(v8::ArrayBuffer::Allocator* base) : base_(base) {}

  void* Allocate(size_t length) override { return allocate(length, true); }
  void* AllocateUninitialized(size_t length) override {
    return allocate(length, false);
  }

  void Free(void* data, size_t length) override {
    if (data == nullptr) return;
    BlockHeader* h = reinterpret_cast<BlockHeader*>(data) - 1;
    if (h->budget != nullptr) h->budget->used.fetch_sub(h->length);
    base_->Free(h, h->length + sizeof(BlockHeader));
  }

  void* Reallocate(void* data, size_t old_length, size_t new_length) override {
    void* fresh = allocate(new_length, true);
    if (fresh == nullptr) return nullptr;
    if (data != nullptr) {
      std::memcpy(fresh, data, old_length < new_length ? old_length : new_length);
      Free(data, old_length);
    }
    return fresh;
  }

 private:
  void* allocate(size_t length, bool zero) {
    isogate_budget* b = current_budget;
    if (b != nullptr) {
      int64_t limit = b->limit.load();
      if (limit > 0 && b->used.load() + static_cast<int64_t>(length) > limit) {
        return nullptr;  // V8 turns this into a catchable RangeError.
      }
    }
    size_t total = length + sizeof(BlockHeader);
    void* raw = zero ? base_->Allocate(total) : base_->AllocateUninitialized(total);
    if (raw == nullptr) return nullptr;
    BlockHeader* h = static_cast<BlockHeader*>(raw);
    h->budget = b;
    h->length = length;
    if (b != nullptr) b->used.fetch_add(static_cast<int64_t>(length));
    return h + 1;
  }

  v8::ArrayBuffer::Allocator* base_;
};

}  // namespace

struct isogate_heap {
  v8::Isolate* iso;
  size_t hard_limit;  // bytes of used heap (all spaces) that end a run
  std::atomic<int> hit{0};
};

// heap_check runs on the isolate's thread, between two steps of the script
// (an interrupt): V8 lets a single allocation exceed the old-generation
// limit after its last-resort collection (large array backing stores,
// dictionary elements), so the near-heap-limit callback alone is not a cap.
//
// The used heap is summed over the spaces: GetHeapStatistics computes the
// same sum but also walks the list of native contexts, the global handles
// and the allocators' books, which cost more than the sum itself and ran
// after every run.
static size_t used_heap(v8::Isolate* iso) {
  size_t used = 0;
  size_t spaces = iso->NumberOfHeapSpaces();
  for (size_t i = 0; i < spaces; i++) {
    v8::HeapSpaceStatistics s;
    if (iso->GetHeapSpaceStatistics(&s, i)) used += s.space_used_size();
  }
  return used;
}

static bool heap_over(isogate_heap* h) {
  if (used_heap(h->iso) <= h->hard_limit) return false;
  h->hit.store(1);
  return true;
}

static void heap_check(v8::Isolate* iso, void* data) {
  if (heap_over(static_cast<isogate_heap*>(data))) iso->TerminateExecution();
}

static size_t near_heap_limit(void* data, size_t current_heap_limit,
                              size_t initial_heap_limit) {
  isogate_heap* h = static_cast<isogate_heap*>(data);
  h->hit.store(1);
  h->iso->TerminateExecution();
  // Give the script room to unwind; the isolate is recycled afterwards.
  return current_heap_limit * 2 + (64u << 20);
}

extern "C" {

void isogate_install_allocator(void) {
  static bool installed = false;
  if (installed) return;
  installed = true;
  default_allocator = new CountingAllocator(default_allocator);
}

isogate_budget* isogate_budget_new(void) { return new isogate_budget(); }

void isogate_budget_bind(isogate_budget* b) { current_budget = b; }

void isogate_budget_set_limit(isogate_budget* b, int64_t limit_bytes) {
  b->limit.store(limit_bytes);
}

int64_t isogate_budget_used(isogate_budget* b) { return b->used.load(); }

isogate_heap* isogate_heap_install(void* iso, size_t limit_bytes,
                                   size_t hard_limit_bytes) {
  isogate_heap* h = new isogate_heap();
  h->iso = static_cast<v8::Isolate*>(iso);
  h->hard_limit = hard_limit_bytes;
  // Adding then removing the callback with a limit lowers the isolate's
  // old-generation limit to max(limit, 1.25 × live heap); then the callback
  // is installed for good to catch the hit.
  h->iso->AddNearHeapLimitCallback(near_heap_limit, h);
  h->iso->RemoveNearHeapLimitCallback(near_heap_limit, limit_bytes);
  h->iso->AddNearHeapLimitCallback(near_heap_limit, h);
  return h;
}

int isogate_heap_hit(isogate_heap* h) { return h->hit.load(); }

void isogate_heap_poll(isogate_heap* h) {
  h->iso->RequestInterrupt(heap_check, h);
}

int isogate_heap_check_now(isogate_heap* h) {
  IsolateEntered entered(h->iso);
  return heap_over(h) ? 1 : 0;
}

size_t isogate_heap_used(isogate_heap* h) {
  IsolateEntered entered(h->iso);
  return used_heap(h->iso);
}

void isogate_heap_free(isogate_heap* h) { delete h; }

void isogate_disallow_atomics_wait(void* iso) {
  static_cast<v8::Isolate*>(iso)->SetAllowAtomicsWait(false);
}

// The notification runs between v8go calls, so they take the isolate's
// lock and enter it as v8go does for its own calls.
void isogate_low_memory(void* iso) {
  IsolateEntered entered(static_cast<v8::Isolate*>(iso));
  entered.iso->LowMemoryNotification();
}

}  // extern "C"
