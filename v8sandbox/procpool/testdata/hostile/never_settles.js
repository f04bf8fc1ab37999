// expect: EVAL_ERROR
// The main promise waits for nothing: detected at once, not at the deadline.
new Promise(() => {});
