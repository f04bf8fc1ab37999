// expect: OK ["TypeError","TypeError",false,"function"]
// The bridge functions are strict closures: no caller/arguments, no source
// leak of the raw host bindings' objects.
const probe = (f) => { try { return f(); } catch (e) { return e.constructor.name; } };
[
  probe(() => emit.caller),
  probe(() => emit.arguments),
  Object.getOwnPropertyNames(emit).some((k) => !["length", "name", "prototype"].includes(k)),
  typeof emit,
];
