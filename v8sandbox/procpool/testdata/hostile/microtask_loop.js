// expect: TIMEOUT
// A microtask that re-queues itself forever: the event loop never gets
// control back. (f returns nothing, so no promise chain builds up: this is a
// pure CPU loop, not a memory bomb.)
function f() {
  Promise.resolve().then(f);
}
f();
