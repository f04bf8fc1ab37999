// expect: EVAL_ERROR
// One 4 GB buffer: RangeError.
new ArrayBuffer(2 ** 32);
