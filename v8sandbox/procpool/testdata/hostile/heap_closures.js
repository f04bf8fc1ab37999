// expect: HEAP_LIMIT
// timeout: 60s
// heap-mb: 16
// Closures each retaining their own array.
const fs = [];
for (;;) {
  const big = new Array(1000).fill(1);
  fs.push(() => big);
}
