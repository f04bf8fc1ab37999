// expect: OK [false,0]
// Error.prepareStackTrace with structured call sites must not hand out the
// bridge's functions or receivers: its frames are strict mode, so
// getFunction() and getThis() are undefined there.
let bridge = false;
let seen = 0;
const isBridge = (v) => typeof v === "function" && /host(Sync|Async)|unwrap|stringify\(args\)/.test(String(v));
Error.prepareStackTrace = (err, frames) => {
  for (const f of frames) {
    seen++;
    if (isBridge(f.getFunction()) || isBridge(f.getThis())) bridge = true;
  }
  return "stack";
};
(async () => {
  try {
    await tick("fail");
  } catch (e) {
    e.stack;
  }
  try {
    emit({
      toJSON() {
        throw new Error("inside stringify");
      },
    });
  } catch (e) {
    e.stack;
  }
  return [bridge, seen > 0 ? 0 : -1];
})();
