// expect: HEAP_LIMIT
// process-only
// V8 aborts the whole process: "Fatal JavaScript invalid size error".
"x".repeat(2 ** 27).split("");
