// expect: HEAP_LIMIT
// timeout: 60s
// heap-mb: 16
// Grows the heap between host calls.
(async () => {
  const keep = [];
  for (;;) {
    for (let i = 0; i < 50000; i++) keep.push([i]);
    await tick();
  }
})();
