// expect: TIMEOUT
// The result's getter loops while the engine serializes it.
({
  get a() {
    for (;;) {}
  },
});
