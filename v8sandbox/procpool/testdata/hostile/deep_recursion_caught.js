// expect: OK true
// Catching stack overflow at every level, then going on.
function f(n) {
  try {
    return f(n + 1);
  } catch (e) {
    return n;
  }
}
f(0) > 1000;
