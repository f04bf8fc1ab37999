// expect: OUTPUT_LIMIT
// The output cap is fatal: catching its error does not help.
for (;;) {
  try {
    emit("x".repeat(1000));
  } catch (e) {}
}
