// expect: HEAP_LIMIT
// timeout: 60s
// heap-mb: 16
// Unbounded dictionary-mode object.
const o = {};
for (let i = 0; ; i++) o["k" + i] = [i];
