// expect: OK ["emit","tick"]
// Indirect eval and Function('return this') see the same, clean global.
const g1 = (0, eval)("this");
const g2 = Function("return this")();
const names = new Set();
for (const g of [g1, g2]) for (const k of Object.getOwnPropertyNames(g)) names.add(k);
["require", "process", "console", "fetch", "WebAssembly", "setTimeout", "queueMicrotask", "Deno", "Bun", "print", "load", "read", "quit", "d8", "Realm", "hostSync", "hostAsync", "emit", "tick"].filter((n) => names.has(n) || typeof g1[n] !== "undefined").sort();
