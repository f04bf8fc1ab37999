// expect: HEAP_LIMIT
// timeout: 60s
// heap-mb: 16
// An ever-deeper chain of objects.
let o = {};
for (;;) o = { o };
