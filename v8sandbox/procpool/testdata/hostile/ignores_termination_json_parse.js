// expect: TIMEOUT|HEAP_LIMIT
// process-only
// It grows memory too: the heap or RSS cap may end it before the deadline.
// Parsing 20 million numbers is not interruptible.
JSON.parse("[" + "1,".repeat(2e7) + "1]");
