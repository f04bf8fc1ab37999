// expect: HEAP_LIMIT|TIMEOUT
// process-only
// The same abort inside try/catch: still fatal to the process.
// On a loaded machine the 1 s deadline can come first: both are correct.
try {
  "x".repeat(2 ** 27).split("");
} catch (e) {
  "caught";
}
