// expect: TIMEOUT
// An async loop awaiting a host call forever: the deadline must fire while the
// event loop waits on the host.
(async () => {
  for (;;) await tick();
})();
