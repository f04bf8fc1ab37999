// expect: TIMEOUT|HEAP_LIMIT|OK
// process-only
// It grows memory too: the heap or RSS cap may end it before the deadline.
// Parsing 20 million numbers is not interruptible. On a fast, idle machine
// the parse finishes within the deadline (about 0.9 s on a 2-core EPYC), so
// success is a correct outcome too: what the case checks is that it ends.
JSON.parse("[" + "1,".repeat(2e7) + "1]");
