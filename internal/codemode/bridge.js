// bridge.js is the trusted prelude of every code-mode run. It installs one
// Proxy per configured backend, mirrored on globalThis under the backend's
// sanitized and original names, plus console, require, __interfaces and
// __getToolInterface. It knows no tool names: the host resolves a property
// name to a tool of the catalogue (lookup) the first time a run touches it,
// and decides again, from the backend and tool passed as separate values,
// what each call reaches (call). Backend names arrive as JSON data (SPEC),
// never spliced into code; the prelude depends only on the backend list, so
// it is the same for every run of a catalogue version.
//
// It runs in the strict function scope of internal/jsvalue's kit (see
// prelude in bridge.go) and uses the kit's captured built-ins: first it
// registers the kit's result sanitizer, the conversion run_code shares.
installSerializer(makeSanitizer({}));

const call = global.__isogate_call;
const lookup = global.__isogate_lookup;
const keys = global.__isogate_keys;
const log = global.__isogate_console;
const interfaces = global.__isogate_interfaces;
const toolInterface = global.__isogate_interface;
delete global.__isogate_call;
delete global.__isogate_lookup;
delete global.__isogate_keys;
delete global.__isogate_console;
delete global.__isogate_interfaces;
delete global.__isogate_interface;
const spec = SPEC;

// A call the pipeline refused, or a backend failure, rejects with an
// Error whose code property is the failure's code ("TOOL_DENIED",
// "BACKEND_UNAVAILABLE", …): the host sends it as data (v8sandbox.HostError).

const makeBackend = (backend) => {
  // Per run: property name → tool function, or null for "no such tool";
  // one function per tool, whichever name reached it.
  const cache = objectCreate(null);
  const byTool = objectCreate(null);
  const resolve = (prop) => {
    if (typeof prop !== "string") return undefined;
    if (!hasOwn(cache, prop)) {
      const found = lookup(backend.name, prop); // [original, ident], or undefined
      let fn = null;
      if (found !== undefined && found !== null) {
        const tool = found[0];
        if (hasOwn(byTool, tool)) {
          fn = byTool[tool];
        } else {
          fn = async function (args) {
            return await call(backend.name, tool, args === undefined ? {} : args);
          };
          defineProperty(fn, "name", { value: found[1] });
          byTool[tool] = fn;
        }
      }
      cache[prop] = fn;
    }
    const fn = cache[prop];
    return fn === null ? undefined : fn;
  };
  const refuse = () => false;
  return new Proxy({}, { // made in the prelude, before user code runs
    get: (target, prop) => resolve(prop),
    has: (target, prop) => resolve(prop) !== undefined,
    ownKeys: () => keys(backend.name),
    getOwnPropertyDescriptor: (target, prop) => {
      const fn = resolve(prop);
      return fn === undefined ? undefined : { value: fn, writable: false, enumerable: true, configurable: true };
    },
    set: refuse, defineProperty: refuse, deleteProperty: refuse, setPrototypeOf: refuse,
  });
};

for (const backend of spec) {
  const api = makeBackend(backend);
  for (const key of new Set([backend.ident, backend.name])) {
    if (key === "" || key in global) continue; // never shadow a built-in
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
  throw new ErrorCtor("require(" + stringify(StringCtor(name)) + ") is not available: isogate programs have no " +
    "modules, filesystem, network, environment or process access. Call backend tools instead, " +
    "e.g. `await backend.tool({...})`; see __interfaces for what exists.");
};

const format = (v) => {
  if (typeof v === "string") return v;
  if (typeof v === "function") return "[Function " + (v.name || "anonymous") + "]";
  if (typeof v === "bigint") return StringCtor(v) + "n";
  if (isPrototypeOf(ErrorPrototype, v)) return v.stack || StringCtor(v); // v instanceof Error
  try {
    const seen = new WeakSetCtor();
    const s = stringify(v, (k, x) => {
      if (typeof x === "bigint") return StringCtor(x) + "n";
      if (typeof x === "function") return "[Function " + (x.name || "anonymous") + "]";
      if (x !== null && typeof x === "object") {
        if (weakSetHas(seen, x)) return "[Circular]";
        weakSetAdd(seen, x);
      }
      return x;
    });
    return s === undefined ? StringCtor(v) : s;
  } catch (e) {
    try { return StringCtor(v); } catch (e2) { return "[unprintable]"; }
  }
};
// A line is the formatted arguments joined by spaces; `${…}` converts as
// Array.prototype.join would (format never returns null or undefined),
// and concatenating is faster than building a prototype-less array.
const logger = (level) => function (...args) {
  let line = "";
  for (let i = 0; i < args.length; i++) line += (i > 0 ? " " : "") + `${format(args[i])}`;
  log(level, line);
};
global.console = Object.freeze({
  log: logger("log"), info: logger("info"), warn: logger("warn"),
  error: logger("error"), debug: logger("debug"),
});
