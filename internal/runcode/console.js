// console.js formats console output the way Node's util.inspect does, on
// one line: strings print raw at the top level and quoted inside objects,
// objects as { a: 1, b: 'x' }, arrays as [ 1, 2 ], Map(1) { 'k' => 1 },
// functions as [Function: name], cycles as [Circular]. Lines go to Go
// through the sync host function captured by prelude.js. Like prelude.js it
// runs in internal/jsvalue's kit scope and uses its captured built-ins.

const INSPECT_DEPTH = 4; // nesting shown before [Object] / [Array]
const MAX_ITEMS = 100; // array items and object properties shown
const MAX_STRING = 10000; // characters of a nested string shown
const MAX_LINE = 10000; // characters of one console line kept
const identifierRE = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

function quote(s) {
  if (s.length > MAX_STRING) {
    s = stringSlice(s, 0, MAX_STRING) + "... " + (s.length - MAX_STRING) + " more characters";
  }
  s = stringReplace(s, /[\\'\n\r\t]/g, (c) => (c === "\n" ? "\\n" : c === "\r" ? "\\r" : c === "\t" ? "\\t" : "\\" + c));
  return "'" + s + "'";
}

function formatKey(k) {
  if (typeof k === "symbol") return "[" + symbolToString(k) + "]";
  return regexpTest(identifierRE, k) ? k : quote(k);
}

function constructorName(v) {
  try {
    const proto = getPrototypeOf(v);
    if (proto === null) return null;
    const desc = getOwnPropertyDescriptor(proto, "constructor");
    const ctor = desc && desc.value;
    const name = typeof ctor === "function" ? ctor.name : "";
    return typeof name === "string" ? name : "";
  } catch {
    return "";
  }
}

// inspect renders any value on one line; top is true for a console
// argument itself (strings print raw, errors print their stack).
function inspect(v, top) {
  return inspectValue(v, 0, newArray(), top);
}

function inspectValue(v, depth, seen, top) {
  switch (typeof v) {
    case "string":
      return top ? v : quote(v);
    case "number":
      return objectIs(v, -0) ? "-0" : "" + v;
    case "bigint":
      return bigintToString(v) + "n";
    case "boolean":
    case "undefined":
      return "" + v;
    case "symbol":
      return symbolToString(v);
    case "function":
      return functionLabel(v);
  }
  if (v === null) return "null";
  for (let i = 0; i < seen.length; i++) {
    if (seen[i] === v) return "[Circular]";
  }
  push(seen, v);
  try {
    return inspectObject(v, depth, seen, top);
  } catch (e) {
    return "[Uninspectable: " + errorText(e) + "]";
  } finally {
    seen.length--;
  }
}

function inspectObject(v, depth, seen, top) {
  if (brand(dateGetTime, v)) {
    const t = dateGetTime(v);
    return t !== t ? "Invalid Date" : dateToISOString(v);
  }
  if (isError(v)) {
    const head = errorHead(v);
    if (!top) return "[" + head + "]";
    let stack = "";
    try {
      stack = stripStack(v.stack);
    } catch {}
    return stack || head;
  }
  if (brand(regexpSource, v)) {
    return "/" + regexpSource(v) + "/" + regexpFlags(v);
  }
  if (brand(numberValueOf, v)) return "[Number: " + inspectValue(numberValueOf(v), depth, seen, false) + "]";
  if (brand(stringValueOf, v)) return "[String: " + quote(stringValueOf(v)) + "]";
  if (brand(booleanValueOf, v)) return "[Boolean: " + booleanValueOf(v) + "]";
  if (brand(bigintValueOf, v)) return "[BigInt: " + bigintToString(bigintValueOf(v)) + "n]";
  if (brand(symbolValueOf, v)) return "[Symbol: " + symbolToString(symbolValueOf(v)) + "]";
  if (brand(weakMapHas, v)) return "WeakMap { <items unknown> }";
  if (brand(weakSetHas, v)) return "WeakSet { <items unknown> }";
  if (isPrototypeOf(PromisePrototype, v)) return "Promise { <state unknown> }";
  if (brand(arrayBufferByteLength, v)) return "ArrayBuffer { byteLength: " + arrayBufferByteLength(v) + " }";

  const next = depth + 1;
  const parts = newArray();
  let size = -1;
  let prefix = "";
  let open = "{";
  let close = "}";

  if (isArray(v)) {
    if (depth >= INSPECT_DEPTH) return "[Array]";
    const n = v.length;
    for (let i = 0; i < n && i < MAX_ITEMS; i++) push(parts, inspectProperty(v, i, next, seen));
    if (n > MAX_ITEMS) push(parts, "... " + (n - MAX_ITEMS) + " more items");
    open = "[";
    close = "]";
  } else if (brand(mapSize, v)) {
    size = mapSize(v);
    prefix = "Map(" + size + ") ";
    if (depth >= INSPECT_DEPTH) return "[Map]";
    mapForEach(v, (value, key) => {
      if (parts.length < MAX_ITEMS) push(parts, inspectValue(key, next, seen, false) + " => " + inspectValue(value, next, seen, false));
    });
    if (size > MAX_ITEMS) push(parts, "... " + (size - MAX_ITEMS) + " more items");
  } else if (brand(setSize, v)) {
    size = setSize(v);
    prefix = "Set(" + size + ") ";
    if (depth >= INSPECT_DEPTH) return "[Set]";
    setForEach(v, (value) => {
      if (parts.length < MAX_ITEMS) push(parts, inspectValue(value, next, seen, false));
    });
    if (size > MAX_ITEMS) push(parts, "... " + (size - MAX_ITEMS) + " more items");
  } else if (isView(v)) {
    const tag = typedArrayTag(v);
    if (tag === undefined) return "DataView { byteLength: " + dataViewByteLength(v) + " }";
    const n = typedArrayLength(v);
    prefix = tag + "(" + n + ") ";
    if (depth >= INSPECT_DEPTH) return "[" + tag + "]";
    for (let i = 0; i < n && i < MAX_ITEMS; i++) push(parts, inspectValue(v[i], next, seen, false));
    if (n > MAX_ITEMS) push(parts, "... " + (n - MAX_ITEMS) + " more items");
    open = "[";
    close = "]";
  } else {
    const name = constructorName(v);
    if (name === null) prefix = "[Object: null prototype] ";
    else if (name !== "Object") prefix = (name || "Object") + " ";
    if (depth >= INSPECT_DEPTH) return "[" + (name || "Object") + "]";
    const keys = objectKeys(v);
    for (let i = 0; i < keys.length && i < MAX_ITEMS; i++) {
      push(parts, formatKey(keys[i]) + ": " + inspectProperty(v, keys[i], next, seen));
    }
    if (keys.length > MAX_ITEMS) push(parts, "... " + (keys.length - MAX_ITEMS) + " more properties");
  }
  if (parts.length === 0) return prefix + open + close;
  return prefix + open + " " + join(parts, ", ") + " " + close;
}

// inspectProperty shows accessors as [Getter] / [Setter] without calling them.
function inspectProperty(v, key, depth, seen) {
  let desc;
  try {
    desc = getOwnPropertyDescriptor(v, key);
  } catch (e) {
    return "[Uninspectable: " + errorText(e) + "]";
  }
  if (desc === undefined) return "undefined";
  if (desc.get || desc.set) {
    return desc.get && desc.set ? "[Getter/Setter]" : desc.get ? "[Getter]" : "[Setter]";
  }
  return inspectValue(desc.value, depth, seen, false);
}

// format renders console arguments, honouring printf-style directives in a
// first string argument (%s %d %i %f %j %o %O %c %%).
function format(args) {
  const parts = newArray();
  let rest = 0;
  if (args.length > 0 && typeof args[0] === "string" && stringIndexOf(args[0], "%") >= 0) {
    let next = 1;
    const text = stringReplace(args[0], /%([sdifjoOc%])/g, (match, d) => {
      if (d === "%") return "%";
      if (next >= args.length) return match;
      const a = args[next++];
      switch (d) {
        case "s":
          return typeof a === "string" ? a : inspect(a, false);
        case "d":
        case "i": {
          if (typeof a === "bigint") return bigintToString(a) + "n";
          if (typeof a === "symbol") return "NaN";
          let n;
          try { n = +a; } catch { n = NaN; }
          return "" + (d === "i" ? (n < 0 ? -mathFloor(-n) : mathFloor(n)) : n);
        }
        case "f": {
          let n;
          try { n = typeof a === "symbol" ? NaN : +a; } catch { n = NaN; }
          return "" + n;
        }
        case "j":
          try {
            return stringify(a);
          } catch (e) {
            return "[Circular]";
          }
        case "c":
          return "";
        default:
          return inspect(a, false);
      }
    });
    push(parts, text);
    rest = next;
  }
  for (let i = rest; i < args.length; i++) push(parts, inspect(args[i], true));
  return join(parts, " ");
}

function installConsole(global) {
  let full = false;
  let indent = "";
  const counts = objectCreate(null);
  const timers = objectCreate(null);

  const emit = (stream, text) => {
    if (full) {
      hostConsole(stream);
      return;
    }
    if (indent) text = indent + stringReplace(text, /\n/g, "\n" + indent);
    if (text.length > MAX_LINE) {
      text = stringSlice(text, 0, MAX_LINE) + "... [" + (text.length - MAX_LINE) + " more characters]";
    }
    if (hostConsole(stream, text) <= 0) full = true;
  };
  const out = (...args) => emit("stdout", format(args));
  const err = (...args) => emit("stderr", format(args));
  const label = (l) => (l === undefined ? "default" : typeof l === "symbol" ? symbolToString(l) : "" + l);

  const console = {
    log: out,
    info: out,
    debug: out,
    warn: err,
    error: err,
    dir: (v) => emit("stdout", inspect(v, false)),
    table: out,
    trace: (...args) => {
      let stack = "";
      try {
        stack = stripStack(new ErrorCtor().stack);
        stack = stringSlice(stack, stringIndexOf(stack, "\n") + 1);
      } catch {}
      emit("stderr", "Trace" + (args.length ? ": " + format(args) : "") + (stack ? "\n" + stack : ""));
    },
    assert: (cond, ...args) => {
      if (!cond) emit("stderr", "Assertion failed" + (args.length ? ": " + format(args) : ""));
    },
    count: (l) => {
      const k = label(l);
      counts[k] = (counts[k] || 0) + 1;
      emit("stdout", k + ": " + counts[k]);
    },
    countReset: (l) => {
      counts[label(l)] = 0;
    },
    time: (l) => {
      timers[label(l)] = dateNow();
    },
    timeLog: (l, ...args) => {
      const k = label(l);
      if (timers[k] === undefined) return emit("stderr", "Warning: No such label '" + k + "' for console.timeLog()");
      emit("stdout", k + ": " + (dateNow() - timers[k]) + "ms" + (args.length ? " " + format(args) : ""));
    },
    timeEnd: (l) => {
      const k = label(l);
      if (timers[k] === undefined) return emit("stderr", "Warning: No such label '" + k + "' for console.timeEnd()");
      emit("stdout", k + ": " + (dateNow() - timers[k]) + "ms");
      delete timers[k];
    },
    group: (...args) => {
      if (args.length) out(...args);
      indent += "  ";
    },
    groupEnd: () => {
      indent = stringSlice(indent, 2);
    },
  };
  console.groupCollapsed = console.group;
  defineProperty(global, "console", { value: console, writable: true, enumerable: false, configurable: true });
}
