// expect: TIMEOUT
// Replacing a host function with a looping getter only hurts the script itself.
Object.defineProperty(globalThis, "emit", { get() { for (;;) {} } });
emit("x");
