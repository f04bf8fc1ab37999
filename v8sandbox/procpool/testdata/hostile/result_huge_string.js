// expect: OUTPUT_LIMIT
// timeout: 5s
// A 2 MB result over the 1 MB result cap.
"x".repeat(2 << 20);
