// expect: TIMEOUT
// Tries to survive termination with finally and catch.
for (;;) {
  try {
    for (;;) {}
  } catch (e) {
    // termination is not catchable
  } finally {
    continue;
  }
}
