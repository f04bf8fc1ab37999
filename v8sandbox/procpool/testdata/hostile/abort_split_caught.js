// expect: HEAP_LIMIT
// process-only
// The same abort inside try/catch: still fatal to the process.
try {
  "x".repeat(2 ** 27).split("");
} catch (e) {
  "caught";
}
