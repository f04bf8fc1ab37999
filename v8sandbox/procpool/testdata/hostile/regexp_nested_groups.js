// expect: TIMEOUT
// Exponential backtracking with alternation inside a star.
/^(\w+\s?)*$/.test("aaaa ".repeat(12) + "!");
