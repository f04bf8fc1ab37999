// expect: OUTPUT_LIMIT
// Overwriting the host function globals only changes what the script itself
// sees: the real function kept aside still enforces the output cap, and the
// cap's error is fatal even inside try/finally.
const realEmit = emit;
globalThis.emit = () => {};
globalThis.tick = () => Promise.resolve(0);
emit("x".repeat(1 << 20));
try {
  for (;;) realEmit("x".repeat(1000));
} finally {
  globalThis.escaped = true;
}
