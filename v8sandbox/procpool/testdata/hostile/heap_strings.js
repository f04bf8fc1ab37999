// expect: HEAP_LIMIT
// timeout: 60s
// heap-mb: 16
// Unbounded array of large distinct strings.
const s = [];
for (;;) s.push("x".repeat(1000) + Math.random());
