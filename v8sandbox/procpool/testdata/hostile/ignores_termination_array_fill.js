// expect: TIMEOUT|HEAP_LIMIT
// process-only
// It grows memory too: the heap or RSS cap may end it before the deadline.
// new Array(2**27).fill(0) ignores termination for tens of seconds and grows
// to gigabytes.
new Array(2 ** 27).fill(0);
