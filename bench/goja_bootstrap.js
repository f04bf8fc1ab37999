// goja_bootstrap.js runs first in every goja runtime, mirroring
// v8sandbox/bootstrap.js: it installs the workload's host functions (JSON
// arguments in, a JSON envelope out) and returns the helpers the variant
// needs, captured before user code can tamper with built-ins.
(function (hostSync, hostAsync, names) {
  "use strict";
  const global = globalThis;
  const stringify = JSON.stringify;
  const parse = JSON.parse;
  const ErrorCtor = Error;
  const then = Promise.prototype.then;
  const apply = Reflect.apply;
  const StringCtor = String;
  const resolve = Promise.resolve.bind(Promise);

  const unwrap = (text) => {
    const envelope = parse(text);
    if (envelope.ok) return envelope.value;
    throw new ErrorCtor(envelope.message);
  };

  for (const name of names) {
    global[name] = hostAsync
      ? function (...args) { return apply(then, hostAsync(name, stringify(args)), [unwrap]); }
      : function (...args) { return unwrap(hostSync(name, stringify(args))); };
  }

  const serialize = (value) => {
    const s = stringify(value);
    return s === undefined ? "null" : s;
  };

  const describe = (reason) => {
    let name = "", message = "", stack = "";
    try {
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
    return stringify({ name, message, stack });
  };

  // settle reports the main promise's outcome through ok(json) or fail(reason).
  const settle = (p, ok, fail) => {
    const onValue = (v) => {
      let s;
      try { s = serialize(v); } catch (e) { fail(e); return; }
      ok(s);
    };
    apply(then, resolve(p), [onValue, fail]);
  };

  return [serialize, describe, settle];
})
