// expect: TIMEOUT|HEAP_LIMIT
// process-only
// It grows memory too: the heap or RSS cap may end it before the deadline.
// Array.from of 2**27 elements ignores TerminateExecution for many seconds:
// only the parent's hard deadline stops it.
Array.from({ length: 2 ** 27 });
