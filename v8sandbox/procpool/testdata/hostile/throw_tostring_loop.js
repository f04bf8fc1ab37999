// expect: TIMEOUT
// A thrown object whose toString loops while the engine formats the exception.
throw {
  toString() {
    for (;;) {}
  },
};
