// expect: OUTPUT_LIMIT
// timeout: 5s
// A tiny object whose toJSON expands into a huge string.
({ toJSON: () => "x".repeat(4 << 20) });
