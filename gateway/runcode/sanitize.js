// sanitize.js turns the value returned by the user's code into plain JSON
// data before the engine serializes it. It never throws for a value user
// code can build: every property read is guarded, so throwing getters,
// revoked Proxies and hostile toJSON methods end up as marker strings.
//
// Rules:
//   undefined → null; NaN, Infinity, -Infinity → "NaN", "Infinity", "-Infinity";
//   BigInt → decimal string; Symbol → "Symbol(desc)";
//   function → "[Function: name]" (or "[class Name]");
//   cycle → "[Circular]"; an object nested deeper than MAX_DEPTH → "[MaxDepth]";
//   Map with string keys → object, other Map → array of [key, value];
//   Set → array; Date → ISO string ("Invalid Date"); RegExp → "/src/flags";
//   Error → {name, message, stack} (+ cause); typed array → array of numbers;
//   ArrayBuffer / DataView → "[ArrayBuffer: N bytes]"; Promise, WeakMap,
//   WeakSet → "[Promise]", …; boxed primitives → their primitive;
//   an object with a toJSON method → what toJSON returns, sanitized;
//   other objects → their own enumerable string-keyed properties;
//   a property whose read throws → "[Getter threw: <error>]";
//   an object that cannot be inspected at all → "[Unserializable: <error>]".

const MAX_DEPTH = 10;

function sanitize(value) {
  return sanitizeValue(value, 0, []);
}

function sanitizeValue(v, depth, ancestors) {
  switch (typeof v) {
    case "undefined":
      return null;
    case "boolean":
    case "string":
      return v;
    case "number":
      if (v !== v) return "NaN";
      if (v === Infinity) return "Infinity";
      if (v === -Infinity) return "-Infinity";
      return v;
    case "bigint":
      return apply(bigintToString, v, []);
    case "symbol":
      return apply(symbolToString, v, []);
    case "function":
      return functionLabel(v);
  }
  if (v === null) return null;
  for (let i = 0; i < ancestors.length; i++) {
    if (ancestors[i] === v) return "[Circular]";
  }
  if (depth > MAX_DEPTH) return "[MaxDepth]";
  push(ancestors, v);
  try {
    return sanitizeObject(v, depth + 1, ancestors);
  } catch (e) {
    return "[Unserializable: " + errorText(e) + "]";
  } finally {
    ancestors.length--;
  }
}

// readProperty reads v[key] and sanitizes it, turning a throw into a marker.
function readProperty(v, key, depth, ancestors) {
  let value;
  try {
    value = v[key];
  } catch (e) {
    return "[Getter threw: " + errorText(e) + "]";
  }
  return sanitizeValue(value, depth, ancestors);
}

// sanitizeObject renders object v; depth is the depth of its children.
function sanitizeObject(v, depth, ancestors) {
  if (isArray(v)) {
    const out = [];
    const n = v.length;
    for (let i = 0; i < n; i++) push(out, readProperty(v, i, depth, ancestors));
    return out;
  }
  if (brand(dateGetTime, v)) {
    const t = apply(dateGetTime, v, []);
    return t !== t ? "Invalid Date" : apply(dateToISOString, v, []);
  }
  if (brand(mapSize, v)) {
    let stringKeys = true;
    apply(mapForEach, v, [(_, key) => { if (typeof key !== "string") stringKeys = false; }]);
    if (stringKeys) {
      const out = objectCreate(null);
      apply(mapForEach, v, [(value, key) => setKey(out, key, sanitizeValue(value, depth, ancestors))]);
      return out;
    }
    const out = [];
    apply(mapForEach, v, [(value, key) => {
      const entry = [];
      push(entry, sanitizeValue(key, depth, ancestors));
      push(entry, sanitizeValue(value, depth, ancestors));
      push(out, entry);
    }]);
    return out;
  }
  if (brand(setSize, v)) {
    const out = [];
    apply(setForEach, v, [(value) => push(out, sanitizeValue(value, depth, ancestors))]);
    return out;
  }
  if (isError(v)) {
    const out = objectCreate(null);
    setKey(out, "name", safeString(v, "name") || "Error");
    setKey(out, "message", safeString(v, "message"));
    let stack = "";
    try {
      stack = stripStack(v.stack);
    } catch {}
    setKey(out, "stack", stack);
    let hasCause = false;
    try {
      hasCause = apply(hasOwnProperty, v, ["cause"]);
    } catch {}
    if (hasCause) setKey(out, "cause", readProperty(v, "cause", depth, ancestors));
    return out;
  }
  if (brand(regexpSource, v)) {
    return "/" + apply(regexpSource, v, []) + "/" + apply(regexpFlags, v, []);
  }
  if (isView(v)) {
    const tag = apply(typedArrayTag, v, []);
    if (tag === undefined) return "[DataView: " + apply(dataViewByteLength, v, []) + " bytes]";
    const out = [];
    const n = apply(typedArrayLength, v, []);
    for (let i = 0; i < n; i++) push(out, sanitizeValue(v[i], depth, ancestors));
    return out;
  }
  if (brand(arrayBufferByteLength, v)) {
    return "[ArrayBuffer: " + apply(arrayBufferByteLength, v, []) + " bytes]";
  }
  if (brand(weakMapHas, v)) return "[WeakMap]";
  if (brand(weakSetHas, v)) return "[WeakSet]";
  if (apply(isPrototypeOf, PromisePrototype, [v])) return "[Promise]";
  if (brand(numberValueOf, v)) return sanitizeValue(apply(numberValueOf, v, []), depth, ancestors);
  if (brand(stringValueOf, v)) return apply(stringValueOf, v, []);
  if (brand(booleanValueOf, v)) return apply(booleanValueOf, v, []);
  if (brand(bigintValueOf, v)) return sanitizeValue(apply(bigintValueOf, v, []), depth, ancestors);
  if (brand(symbolValueOf, v)) return sanitizeValue(apply(symbolValueOf, v, []), depth, ancestors);

  let toJSON;
  try {
    toJSON = v.toJSON;
  } catch (e) {
    return "[Getter threw: " + errorText(e) + "]";
  }
  if (typeof toJSON === "function") {
    let replaced;
    try {
      replaced = apply(toJSON, v, [""]);
    } catch (e) {
      return "[toJSON threw: " + errorText(e) + "]";
    }
    return sanitizeValue(replaced, depth, ancestors);
  }

  const out = objectCreate(null);
  const keys = objectKeys(v);
  for (let i = 0; i < keys.length; i++) {
    setKey(out, keys[i], readProperty(v, keys[i], depth, ancestors));
  }
  return out;
}
