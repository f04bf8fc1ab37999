// expect: HEAP_LIMIT
// timeout: 60s
// heap-mb: 16
// A heap bomb inside try/catch: running out of heap is not catchable.
let survived = false;
try {
  const a = [];
  for (;;) a.push(new Array(100).fill(Math.random()));
} catch (e) {
  survived = true;
}
survived;
