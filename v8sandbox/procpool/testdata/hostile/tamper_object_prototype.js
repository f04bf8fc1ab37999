// expect: OK [1,null,"clean"]
// Object.prototype pollution (including the envelope fields the bridge reads:
// ok, value, message, name) and Array.prototype setters do not reach the host
// and do not corrupt a host result that has a value.
// A host function returning undefined yields undefined (null in the result),
// not the polluted Object.prototype.value: the bridge reads own properties only.
Object.defineProperty(Object.prototype, "message", {
  get() {
    throw new Error("polluted message");
  },
});
Object.defineProperty(Array.prototype, "0", {
  set(v) {
    throw new Error("polluted setter");
  },
  configurable: true,
});
Object.prototype.ok = false;
Object.prototype.value = "pwned";
Object.prototype.name = "Pwned";
(async () => {
  const t = await tick();
  const e = emit("x");
  return [t, e === undefined ? null : e, "clean"];
})();
