// sanitize.js is the one conversion of a JavaScript value into plain JSON
// data that isogate uses for results: call_tool_chain results (registered
// with the sandbox as its serializer) and run_code results (inside its
// envelope). It never throws for a value user code can build: every
// property read is guarded, so throwing getters, revoked Proxies and hostile
// toJSON methods end up as marker strings.
//
// It declares makeSanitizer(options) → sanitize(value) in the scope that
// jsvalue.Scope opens, after kit.js, whose captured intrinsics and helpers
// it uses. options: maxDepth (default 64), stripStack(stack) → stack shown for
// Error values (default: as is), errorText(e) → one-line description of a
// thrown value (default: "Name: message" or String(e)).
//
// Rules:
//   undefined → null; NaN, Infinity, -Infinity → "NaN", "Infinity", "-Infinity";
//   BigInt → decimal string; Symbol → "Symbol(desc)";
//   function → "[Function: name]" (or "[class Name]");
//   cycle → "[Circular]"; an object nested deeper than maxDepth → "[MaxDepth]";
//   Map with string keys → object, other Map → array of [key, value];
//   Set → array; Date → ISO string ("Invalid Date"); RegExp → "/src/flags";
//   Error → {name, message, stack} (+ cause); typed array → array of numbers;
//   ArrayBuffer / DataView → "[ArrayBuffer: N bytes]"; Promise, WeakMap,
//   WeakSet → "[Promise]", …; boxed primitives → their primitive;
//   an object with a toJSON method → what toJSON returns, sanitized (without
//   calling its own toJSON again, as JSON.stringify does);
//   other objects → their own enumerable string-keyed properties;
//   a property whose read throws → "[Getter threw: <error>]";
//   an object that cannot be inspected at all → "[Unserializable: <error>]".
// An object whose prototype is Object.prototype or null is taken as an
// ordinary object without the brand checks (they throw for it, and a throw
// costs microseconds): a Date or Map re-prototyped that way renders as an
// ordinary object.
// Objects and arrays it builds have no prototype, so a script's
// Array.prototype.toJSON cannot change how they serialize.

// notSpecial is sanitizeSpecial's answer for an ordinary object.
const notSpecial = {};

// defaultErrorText is the default errorText: "Name: message" for an
// Error, String(e) for anything else, never throwing.
function defaultErrorText(e) {
  try {
    return isError(e) ? errorHead(e) : StringCtor(e);
  } catch {
    return "unprintable value";
  }
}

// makeSanitizer returns sanitize(value), the conversion with the given
// options (maxDepth, stripStack, errorText; see above).
function makeSanitizer(options) {
  const MAX_DEPTH = (options && options.maxDepth) || 64;
  const stripStack = (options && options.stripStack) || ((s) => (typeof s === "string" ? s : ""));
  const errorText = (options && options.errorText) || defaultErrorText;

  // fromToJSON marks the value a toJSON method returned: as in
  // JSON.stringify, its own toJSON is not called again (its children's are).
  function sanitizeValue(v, depth, ancestors, fromToJSON) {
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
        return bigintToString(v);
      case "symbol":
        return symbolToString(v);
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
      return sanitizeObject(v, depth + 1, ancestors, fromToJSON);
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
  function sanitizeObject(v, depth, ancestors, fromToJSON) {
    if (isArray(v)) {
      const out = newArray();
      const n = v.length;
      for (let i = 0; i < n; i++) push(out, readProperty(v, i, depth, ancestors));
      return out;
    }
    // An object whose prototype is Object.prototype or null is rendered
    // from its keys at once: the brand checks below throw for every plain
    // object, and a throw costs microseconds (14 000 records took seconds).
    let proto;
    try {
      proto = getPrototypeOf(v);
    } catch {
      proto = undefined; // a Proxy whose trap throws: the full checks decide
    }
    if (proto !== ObjectPrototype && proto !== null) {
      const special = sanitizeSpecial(v, depth, ancestors);
      if (special !== notSpecial) return special;
    }
    return sanitizePlain(v, depth, ancestors, fromToJSON);
  }

  // sanitizeSpecial renders a Date, Map, Set, Error, RegExp, typed array,
  // buffer, weak collection, promise or boxed primitive, recognised by its
  // internal slots (not its prototype), and returns notSpecial for anything
  // else.
  function sanitizeSpecial(v, depth, ancestors) {
    if (brand(dateGetTime, v)) {
      const t = dateGetTime(v);
      return t !== t ? "Invalid Date" : dateToISOString(v);
    }
    if (brand(mapSize, v)) {
      let stringKeys = true;
      mapForEach(v, (_, key) => { if (typeof key !== "string") stringKeys = false; });
      if (stringKeys) {
        const out = objectCreate(null);
        mapForEach(v, (value, key) => setKey(out, key, sanitizeValue(value, depth, ancestors)));
        return out;
      }
      const out = newArray();
      mapForEach(v, (value, key) => {
        const entry = newArray();
        push(entry, sanitizeValue(key, depth, ancestors));
        push(entry, sanitizeValue(value, depth, ancestors));
        push(out, entry);
      });
      return out;
    }
    if (brand(setSize, v)) {
      const out = newArray();
      setForEach(v, (value) => push(out, sanitizeValue(value, depth, ancestors)));
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
        hasCause = hasOwnProperty(v, "cause");
      } catch {}
      if (hasCause) setKey(out, "cause", readProperty(v, "cause", depth, ancestors));
      return out;
    }
    if (brand(regexpSource, v)) {
      return "/" + regexpSource(v) + "/" + regexpFlags(v);
    }
    if (isView(v)) {
      const tag = typedArrayTag(v);
      if (tag === undefined) return "[DataView: " + dataViewByteLength(v) + " bytes]";
      const out = newArray();
      const n = typedArrayLength(v);
      for (let i = 0; i < n; i++) push(out, sanitizeValue(v[i], depth, ancestors));
      return out;
    }
    if (brand(arrayBufferByteLength, v)) {
      return "[ArrayBuffer: " + arrayBufferByteLength(v) + " bytes]";
    }
    if (brand(weakMapHas, v)) return "[WeakMap]";
    if (brand(weakSetHas, v)) return "[WeakSet]";
    if (isPrototypeOf(PromisePrototype, v)) return "[Promise]";
    if (brand(numberValueOf, v)) return sanitizeValue(numberValueOf(v), depth, ancestors);
    if (brand(stringValueOf, v)) return stringValueOf(v);
    if (brand(booleanValueOf, v)) return booleanValueOf(v);
    if (brand(bigintValueOf, v)) return sanitizeValue(bigintValueOf(v), depth, ancestors);
    if (brand(symbolValueOf, v)) return sanitizeValue(symbolValueOf(v), depth, ancestors);
    return notSpecial;
  }

  // sanitizePlain renders an ordinary object: what its toJSON returns, or
  // its own enumerable string-keyed properties.
  function sanitizePlain(v, depth, ancestors, fromToJSON) {

    let toJSON;
    try {
      toJSON = fromToJSON ? undefined : v.toJSON;
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
      return sanitizeValue(replaced, depth - 1, ancestors, true);
    }

    const out = objectCreate(null);
    const keys = objectKeys(v);
    for (let i = 0; i < keys.length; i++) {
      setKey(out, keys[i], readProperty(v, keys[i], depth, ancestors));
    }
    return out;
  }

  const sanitize = function sanitize(value) {
    return sanitizeValue(value, 0, newArray());
  };
  sanitize.maxDepth = MAX_DEPTH;
  return sanitize;
}

// isPlainData reports whether JSON.stringify renders v exactly as sanitize
// would, so that v needs no copy: strings, booleans, finite numbers, null,
// arrays (with Array.prototype, no holes) and objects (with Object.prototype
// or none) of those, less than maxDepth deep, nowhere an own toJSON, while
// Object.prototype and Array.prototype have none either. That is what
// JSON.parse returns and what programs build from it; a value read from a
// 1 MB tool result takes a few ms to check where the copy took ~40. A
// getter or Proxy trap met on the way runs here and once more when the
// value is serialized; one that throws makes v not plain.
function isPlainData(v, maxDepth) {
  if (hasOwn(ObjectPrototype, "toJSON") || hasOwn(ArrayPrototype, "toJSON")) return false;
  try {
    return plainValue(v, 0, maxDepth || 64);
  } catch {
    return false;
  }
}

function plainValue(v, depth, maxDepth) {
  switch (typeof v) {
    case "string":
    case "boolean":
      return true;
    case "number":
      return v === v && v !== Infinity && v !== -Infinity;
    case "object":
      break;
    default:
      return false; // undefined, bigint, symbol, function
  }
  if (v === null) return true;
  if (depth >= maxDepth || hasOwn(v, "toJSON")) return false;
  const proto = getPrototypeOf(v);
  if (isArray(v)) {
    if (proto !== ArrayPrototype) return false;
    const n = v.length;
    for (let i = 0; i < n; i++) {
      if (!hasOwn(v, i) || !plainValue(v[i], depth + 1, maxDepth)) return false;
    }
    return true;
  }
  if (proto !== ObjectPrototype && proto !== null) return false;
  const keys = objectKeys(v);
  for (let i = 0; i < keys.length; i++) {
    if (!plainValue(v[keys[i]], depth + 1, maxDepth)) return false;
  }
  return true;
}
