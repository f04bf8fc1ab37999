// expect: HEAP_LIMIT
// timeout: 10s
// heap-mb: 16
// An ever-deeper chain of objects.
let o = {};
for (;;) o = { o };
