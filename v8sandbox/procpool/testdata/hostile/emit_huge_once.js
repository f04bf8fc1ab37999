// expect: OUTPUT_LIMIT
// timeout: 5s
// One 1 MB emit (the harness decodes it before refusing it: slow under -race).
emit("x".repeat(1 << 20));
