// expect: EVAL_ERROR
// 'x'.repeat(2**30) is over the maximum string length: RangeError.
"x".repeat(2 ** 30);
