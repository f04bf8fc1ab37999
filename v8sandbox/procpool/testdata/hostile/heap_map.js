// expect: HEAP_LIMIT
// timeout: 10s
// heap-mb: 16
// Unbounded Map.
const m = new Map();
for (let i = 0; ; i++) m.set(i, { i });
