// expect: TIMEOUT
// Catastrophic backtracking in the regexp engine.
/(a+)+$/.test("a".repeat(40) + "!");
