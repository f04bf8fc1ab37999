// expect: TIMEOUT
// Error.prepareStackTrace loops when the engine reads the stack of an uncaught error.
Error.prepareStackTrace = () => {
  for (;;) {}
};
null.x;
