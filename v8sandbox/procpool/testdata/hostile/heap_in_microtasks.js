// expect: HEAP_LIMIT
// timeout: 60s
// heap-mb: 16
// The heap bomb runs in a promise chain.
const keep = [];
const grow = () => {
  for (let i = 0; i < 10000; i++) keep.push({ i });
  return Promise.resolve().then(grow);
};
grow();
