// expect: TIMEOUT
// Batches of 100 concurrent host calls, forever.
(async () => {
  for (;;) await Promise.all(Array.from({ length: 100 }, () => tick()));
})();
