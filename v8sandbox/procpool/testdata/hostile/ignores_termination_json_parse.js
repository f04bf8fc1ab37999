// expect: TIMEOUT
// process-only
// Parsing 20 million numbers is not interruptible.
JSON.parse("[" + "1,".repeat(2e7) + "1]");
