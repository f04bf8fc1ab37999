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
  const stateCall = (op, a) => {
    let p;
    try {
      callSeq++;
      p = durable ? durableCall(STATE, op, a, callSeq) : call(STATE, op, a, callSeq, null);
    } catch (e) {
      p = new PromiseCtor((resolve, reject) => reject(e));
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
