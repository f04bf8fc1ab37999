// expect: HEAP_LIMIT
// timeout: 60s
// heap-mb: 16
// Unbounded Map.
const m = new Map();
for (let i = 0; ; i++) m.set(i, { i });
