// expect: EVAL_ERROR
// ArrayBuffers live outside the JS heap; the buffer budget turns the bomb into a RangeError.
const keep = [];
for (;;) keep.push(new ArrayBuffer(16 << 20));
