// expect: TIMEOUT
// A rejection reason whose message getter loops while the engine describes it.
Promise.reject({
  get message() {
    for (;;) {}
  },
});
