// expect: EVAL_ERROR
// An array length over 2**32-1: RangeError.
new Array(2 ** 32);
