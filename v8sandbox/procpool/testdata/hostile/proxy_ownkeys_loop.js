// expect: TIMEOUT
// A Proxy whose ownKeys trap loops during result serialization.
new Proxy({}, {
  ownKeys() {
    for (;;) {}
  },
});
