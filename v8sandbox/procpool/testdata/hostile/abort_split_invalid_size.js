// expect: HEAP_LIMIT|TIMEOUT
// process-only
// V8 aborts the whole process: "Fatal JavaScript invalid size error".
// On a loaded machine the 1 s deadline can come first: both are correct.
"x".repeat(2 ** 27).split("");
