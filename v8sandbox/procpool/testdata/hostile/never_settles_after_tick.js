// expect: EVAL_ERROR
// Never settles, after a host call round trip.
(async () => {
  await tick();
  await new Promise(() => {});
})();
