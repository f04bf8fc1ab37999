// expect: HEAP_LIMIT
// timeout: 60s
// heap-mb: 16
// Unbounded array of objects.
const a = [];
for (;;) a.push({ x: [1, 2, 3] });
