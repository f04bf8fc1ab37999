// state.js follows bridge.js in the prelude, in its scope: it installs
// `state`, the program's own key-value store (state.go). Each operation is
// a host call like a tool's, to the reserved backend name STATE (no
// configured backend can have it: backend names have no "."), so that a
// durable run journals it as it journals a tool call and a replay answers
// it from the journal: a write is not made twice, and a read sees what the
// original run saw. A backend named "state" keeps its name: the object is
// not installed then.
{
  const STATE = "isogate.state";
  // A part of a call that JSON cannot carry (a BigInt, a cyclic value)
  // makes the arguments fail to serialize with a TypeError. The call goes
  // to the host then as {unserialisable: why} instead, and the host
  // refuses it with STATE_INVALID (state.go), a host error like any other
  // refusal: nothing is written. The program cannot send that field
  // itself: the arguments are built here from named fields only.
  const stringIncludes = uncurry(String.prototype.includes);
  const partName = (f) => (f === "key" ? "the key" : f === "value" ? "the value" : "the options");
  const unserialisable = (a, e) => {
    if (e === null || typeof e !== "object" || e.name !== "TypeError") return null;
    const fields = objectKeys(a);
    for (let i = 0; i < fields.length; i++) {
      try {
        stringify(a[fields[i]]);
      } catch (err) {
        const m = err !== null && typeof err === "object" ? StringCtor(err.message) : StringCtor(err);
        const why = stringIncludes(m, "BigInt") ? "a BigInt" : stringIncludes(m, "circular") ? "a cyclic structure" : m;
        const r = objectCreate(null);
        r.unserialisable = partName(fields[i]) + " cannot be stored as JSON: " + why;
        return r;
      }
    }
    return null;
  };
  const stateCall = (op, a) => {
    let p;
    callSeq++;
    const send = (args) => (durable ? durableCall(STATE, op, args, callSeq) : call(STATE, op, args, callSeq, null));
    try {
      p = send(a);
    } catch (e) {
      try {
        const why = unserialisable(a, e);
        if (why === null) throw e;
        p = send(why);
      } catch (e2) {
        p = new PromiseCtor((resolve, reject) => reject(e2));
      }
    }
    return track(p, "state." + op);
  };
  // Arguments travel as an object without a prototype: a script's
  // Object.prototype.toJSON does not reach them.
  const keyed = (key) => {
    const a = objectCreate(null);
    a.key = key;
    return a;
  };
  const options = (o, names) => {
    const a = objectCreate(null);
    if (o !== undefined && o !== null) {
      for (let i = 0; i < names.length; i++) {
        const v = o[names[i]];
        if (v !== undefined) a[names[i]] = v;
      }
    }
    return a;
  };
  const api = objectCreate(null);
  const method = (name, fn) => {
    defineProperty(fn, "name", { value: name });
    defineProperty(api, name, { value: fn, enumerable: true });
  };
  method("get", function (key) { return stateCall("get", keyed(key)); });
  method("set", function (key, value, opts) {
    const a = options(opts, ["ttl"]);
    a.key = key;
    a.value = value;
    return stateCall("set", a);
  });
  method("delete", function (key) { return stateCall("delete", keyed(key)); });
  method("list", function (opts) { return stateCall("list", options(opts, ["prefix", "after", "limit"])); });
  Object.freeze(api);
  if (!("state" in global)) {
    defineProperty(global, "state", { value: api, writable: true, configurable: true, enumerable: false });
  }
}
