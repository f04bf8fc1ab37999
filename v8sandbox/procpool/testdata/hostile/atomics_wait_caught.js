// expect: OK "TypeError"
// Atomics.wait throws a TypeError the script can catch.
let name;
try {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 60000);
} catch (e) {
  name = e.constructor.name;
}
name;
