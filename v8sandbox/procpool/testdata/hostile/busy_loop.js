// expect: TIMEOUT
// A plain infinite loop.
for (;;) {}
