// expect: TIMEOUT|HEAP_LIMIT
// Each reaction returns the next promise, so an endless chain of pending
// promises builds up: a CPU loop and a slow memory bomb at once; whichever
// limit comes first ends it.
const f = () => Promise.resolve().then(f);
f();
