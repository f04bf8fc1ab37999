// expect: HEAP_LIMIT
// timeout: 60s
// heap-mb: 16
// Unbounded Set of distinct strings.
const s = new Set();
for (let i = 0; ; i++) s.add("value-" + i + "-" + Math.random());
