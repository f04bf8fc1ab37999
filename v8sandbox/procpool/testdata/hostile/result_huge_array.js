// expect: OUTPUT_LIMIT
// timeout: 5s
// A result of 300 000 numbers over the result cap.
Array.from({ length: 300000 }, (_, i) => i * 1000);
