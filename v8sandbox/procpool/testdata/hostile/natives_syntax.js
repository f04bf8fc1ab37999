// expect: EVAL_ERROR
// V8 intrinsics are not enabled: %DebugPrint is a syntax error.
%DebugPrint(globalThis);
