// expect: TIMEOUT
// An async function awaiting a resolved value forever.
(async () => {
  for (;;) await null;
})();
