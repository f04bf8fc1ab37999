// expect: EVAL_ERROR
// Unbounded recursion: RangeError (maximum call stack size).
function f() {
  return f() + 1;
}
f();
