// expect: EVAL_ERROR
// A getter that throws during serialization.
({
  ok: 1,
  get boom() {
    throw new Error("boom");
  },
});
