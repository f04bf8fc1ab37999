// expect: OUTPUT_LIMIT
// timeout: 5s
// One 1 MB emit, refused by its size.
emit("x".repeat(1 << 20));
