// expect: OK 4
// Typed arrays until the 64 MB buffer budget says no; the script survives.
const keep = [];
let n = 0;
try {
  for (;;) {
    keep.push(new Float64Array(2 << 20));
    n++;
  }
} catch (e) {
  if (!(e instanceof RangeError)) throw e;
}
n;
