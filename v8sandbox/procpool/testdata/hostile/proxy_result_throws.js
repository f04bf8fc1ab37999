// expect: EVAL_ERROR
// A Proxy whose traps throw while the engine serializes the result.
new Proxy({}, { ownKeys() { throw new Error("trap"); } });
