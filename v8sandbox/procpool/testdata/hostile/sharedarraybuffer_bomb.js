// expect: EVAL_ERROR
// SharedArrayBuffers are charged to the same budget.
const keep = [];
for (;;) keep.push(new SharedArrayBuffer(16 << 20));
