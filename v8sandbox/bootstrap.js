// bootstrap.js is the engine's own script, run before any job code: it
// captures the built-ins the engine relies on before user code can tamper
// with them and defines __isogate_bootstrap(hostSync, hostAsync, functions),
// which removes what V8 exposes beyond ECMAScript, installs the job's host
// functions and returns the helpers the engine needs.
//
// It runs once per process, into the startup snapshot every context starts
// from (snapshot.go): a context deserializes its own copy of everything
// below, closures and their state included, so nothing is shared between
// contexts. Without a snapshot it runs in each context.
Object.defineProperty(globalThis, "__isogate_bootstrap", { configurable: true, value: (function () {
  "use strict";
  const global = globalThis;
  const stringify = JSON.stringify;
  const ErrorCtor = Error;
  const then = Promise.prototype.then;
  const apply = Reflect.apply;
  const defineProperty = Object.defineProperty;
  const StringCtor = String;
  // The errors host functions threw into the script, with their codes: a
  // run that ends on one of them ends with its code (describe), which a
  // script cannot forge by throwing an object of its own with a code.
  const hostErrors = new WeakMap();
  const hostErrorsSet = WeakMap.prototype.set;
  const hostErrorsHas = WeakMap.prototype.has;
  const hostErrorsGet = WeakMap.prototype.get;

  delete global.console;

  // Trusted scripts that follow in the snapshot (AddStartupScript) name the
  // globals they leave for a prelude with __isogate_trust; seal removes
  // them, and the hook the prelude may use, before job code runs.
  const trusted = ["__isogate_set_serializer"];
  defineProperty(global, "__isogate_trust", {
    value: (name) => void trusted.push(StringCtor(name)),
    configurable: true,
  });

  return function (hostSync, hostAsync, functions) {
    delete global.__isogate_bootstrap;
    delete global.console;

    const hasOwn = Object.hasOwn;
    // Own properties only: a script that pollutes Object.prototype must not
    // change what a host function returned.
    // A failed call throws an Error built from the host's typed error: name,
    // message, and code and data when the host set them.
    const unwrap = (envelope) => {
      if (hasOwn(envelope, "ok") && envelope.ok) return hasOwn(envelope, "value") ? envelope.value : undefined;
      const d = hasOwn(envelope, "error") && envelope.error !== null ? envelope.error : {};
      const e = new ErrorCtor(hasOwn(d, "message") ? d.message : "host function failed");
      const own = (key, value) => defineProperty(e, key, { value, writable: true, configurable: true });
      if (hasOwn(d, "name")) own("name", d.name);
      if (hasOwn(d, "code")) own("code", d.code);
      if (hasOwn(d, "data")) own("data", d.data);
      if (hasOwn(d, "code") && typeof d.code === "string") apply(hostErrorsSet, hostErrors, [e, d.code]);
      throw e;
    };

    // Each argument is serialized on its own: stringify(args) would honour a
    // script-defined Array.prototype.toJSON and let the script rewrite the
    // whole argument list (for example the backend and tool of a bridge call).
    const frame = (args) => {
      let s = "[";
      for (let i = 0; i < args.length; i++) {
        const v = stringify(args[i]);
        s += (i > 0 ? "," : "") + (v === undefined ? "null" : v);
      }
      return s + "]";
    };

    for (const f of functions) {
      const name = f.name;
      const fn = f.async
        ? function (...args) { return apply(then, hostAsync(name, frame(args)), [unwrap]); }
        : function (...args) { return unwrap(hostSync(name, frame(args))); };
      const parts = name.split(".");
      const leaf = parts.pop();
      let target = global;
      for (const p of parts) {
        if (target[p] === null || (typeof target[p] !== "object" && typeof target[p] !== "function")) target[p] = {};
        target = target[p];
      }
      defineProperty(fn, "name", { value: leaf });
      target[leaf] = fn;
    }

    // A trusted prelude may register one function that turns the completion
    // value into JSON data before it is serialized (internal/jsvalue does);
    // later registrations are ignored. Without one, JSON.stringify rules.
    // The engine removes the hook (seal) once the prelude has run, so job
    // code never sees it.
    // It may give a second function, used instead should serializing what
    // the first returned throw.
    let toData = null;
    let fallback = null;
    defineProperty(global, "__isogate_set_serializer", {
      value: (fn, safe) => {
        if (toData !== null || typeof fn !== "function") return;
        toData = fn;
        if (typeof safe === "function") fallback = safe;
      },
      configurable: true,
    });
    const seal = () => {
      for (let i = 0; i < trusted.length; i++) delete global[trusted[i]];
    };

    const serialize = (value) => {
      let s;
      if (toData === null) {
        s = stringify(value);
      } else {
        try {
          s = stringify(toData(value));
        } catch (e) {
          if (fallback === null) throw e;
          s = stringify(fallback(value));
        }
      }
      return s === undefined ? "null" : s;
    };

    const describe = (reason) => {
      let name = "", message = "", stack = "", code = "";
      try {
        if (reason !== null && typeof reason === "object" && apply(hostErrorsHas, hostErrors, [reason])) {
          code = apply(hostErrorsGet, hostErrors, [reason]);
        }
        if (reason !== null && typeof reason === "object") {
          name = StringCtor(reason.name ?? "");
          message = StringCtor(reason.message ?? "");
          stack = typeof reason.stack === "string" ? reason.stack : "";
          if (!message && !stack) message = stringify(reason) ?? StringCtor(reason);
        } else {
          message = StringCtor(reason);
        }
      } catch (e) {
        message = "unprintable error value";
      }
      // Field by field: strings never consult toJSON, while an object
      // literal would honour a script-defined Object.prototype.toJSON and
      // lose the whole description.
      return '{"name":' + stringify(name) + ',"message":' + stringify(message) + ',"stack":' + stringify(stack) +
        ',"code":' + stringify(code) + "}";
    };

    return [serialize, describe, seal];
  };
})() });
