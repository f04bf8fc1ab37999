// expect: OK [1,2,"ok"]
// JSON, Promise.prototype.then, Reflect.apply and Function.prototype tricks
// cannot break the bridge: it captured what it needs before user code ran.
JSON.stringify = () => { throw new Error("no stringify"); };
JSON.parse = () => { throw new Error("no parse"); };
Reflect.apply = () => { throw new Error("no apply"); };
Function.prototype.call = function () { throw new Error("no call"); };
Function.prototype.apply = function () { throw new Error("no apply"); };
Function.prototype.bind = function () { throw new Error("no bind"); };
Array.prototype[Symbol.iterator] = function* () { for (;;) yield 1; };
const origThen = Promise.prototype.then;
Promise.prototype.then = function (a, b) { return origThen.call(this, a, b); };
(async () => {
  emit("a");
  const a = await tick();
  const b = await tick();
  return [a, b, "ok"];
})();
