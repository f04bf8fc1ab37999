// expect: TIMEOUT|EVAL_ERROR|HEAP_LIMIT
// process-only
// A million nested arrays: JSON.parse overflows the stack (RangeError) or
// runs past the deadline; under CPU pressure it ignored termination for
// seconds in-process, so only the parent's hard deadline bounds it.
JSON.parse("[".repeat(1e6) + "]".repeat(1e6));
