// expect: EVAL_ERROR
// Doubling a string hits V8's maximum string length: a RangeError, not a crash.
let s = "x";
for (;;) s += s;
