// expect: OK true
// A resizable buffer with a huge maximum must not reserve or commit it.
let ok = true;
try {
  const b = new ArrayBuffer(8, { maxByteLength: 2 ** 32 });
  if (b.resize) b.resize(2 ** 31);
  ok = b.byteLength <= 64 << 20;
} catch (e) {
  ok = e instanceof RangeError;
}
ok;
