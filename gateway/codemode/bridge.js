// bridge.js is the trusted prelude of every code-mode run. It turns the raw
// host functions into one object per backend with one async function per
// tool, mirrors each backend object on globalThis under its sanitized and its
// original name, and installs console, require, __interfaces and
// __getToolInterface. Backend and tool names arrive as JSON data (SPEC),
// never spliced into code.
((call, log, interfaces, toolInterface, spec) => {
  "use strict";
  const global = globalThis;
  const stringify = JSON.stringify;
  const StringCtor = String;
  const defineProperty = Object.defineProperty;

  for (const backend of spec) {
    const api = {};
    for (const [name, ident] of backend.tools) {
      const fn = async function (args) {
        return call(backend.name, name, args === undefined ? {} : args);
      };
      defineProperty(fn, "name", { value: ident });
      // defineProperty, not assignment: a tool named "__proto__" or
      // "constructor" must stay an ordinary own property.
      for (const key of new Set([ident, name])) {
        defineProperty(api, key, { value: fn, enumerable: true, writable: true, configurable: true });
      }
    }
    Object.freeze(api);
    for (const key of new Set([backend.ident, backend.name])) {
      if (key in global) continue; // never shadow a built-in
      defineProperty(global, key, { value: api, writable: true, configurable: true, enumerable: false });
    }
  }

  let cachedInterfaces;
  defineProperty(global, "__interfaces", {
    get() { return cachedInterfaces === undefined ? (cachedInterfaces = interfaces()) : cachedInterfaces; },
    configurable: true,
  });
  global.__getToolInterface = function __getToolInterface(name) { return toolInterface(StringCtor(name)); };

  global.require = function require(name) {
    throw new Error("require(" + stringify(StringCtor(name)) + ") is not available: isogate programs have no " +
      "modules, filesystem, network, environment or process access. Call backend tools instead, " +
      "e.g. `await backend.tool({...})`; see __interfaces for what exists.");
  };

  const format = (v) => {
    if (typeof v === "string") return v;
    if (typeof v === "function") return "[Function " + (v.name || "anonymous") + "]";
    if (typeof v === "bigint") return StringCtor(v) + "n";
    if (v instanceof Error) return v.stack || StringCtor(v);
    try {
      const seen = new WeakSet();
      const s = stringify(v, (k, x) => {
        if (typeof x === "bigint") return StringCtor(x) + "n";
        if (typeof x === "function") return "[Function " + (x.name || "anonymous") + "]";
        if (x !== null && typeof x === "object") {
          if (seen.has(x)) return "[Circular]";
          seen.add(x);
        }
        return x;
      });
      return s === undefined ? StringCtor(v) : s;
    } catch (e) {
      try { return StringCtor(v); } catch (e2) { return "[unprintable]"; }
    }
  };
  const logger = (level) => function (...args) {
    log(level, args.map(format).join(" "));
  };
  global.console = Object.freeze({
    log: logger("log"), info: logger("info"), warn: logger("warn"),
    error: logger("error"), debug: logger("debug"),
  });
})(globalThis.__isogate_call, globalThis.__isogate_console, globalThis.__isogate_interfaces,
   globalThis.__isogate_interface, SPEC);
delete globalThis.__isogate_call;
delete globalThis.__isogate_console;
delete globalThis.__isogate_interfaces;
delete globalThis.__isogate_interface;
