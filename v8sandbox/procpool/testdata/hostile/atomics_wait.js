// expect: EVAL_ERROR
// Atomics.wait would block the worker thread: it throws instead.
Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0);
