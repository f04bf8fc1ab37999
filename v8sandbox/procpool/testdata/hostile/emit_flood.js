// expect: OUTPUT_LIMIT
// Emitting forever: the host's output cap ends the run.
for (;;) emit("x".repeat(1000));
