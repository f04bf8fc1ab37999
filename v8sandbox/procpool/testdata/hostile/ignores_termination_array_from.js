// expect: TIMEOUT
// process-only
// Array.from of 2**27 elements ignores TerminateExecution for many seconds:
// only the parent's hard deadline stops it.
Array.from({ length: 2 ** 27 });
