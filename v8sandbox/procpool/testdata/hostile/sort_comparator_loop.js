// expect: TIMEOUT
// A builtin (sort) calling back into a looping comparator.
[3, 2, 1].sort(() => {
  for (;;) {}
});
