// kit.js opens every trusted prelude isogate runs before user code:
// run_code's (internal/runcode) and call_tool_chain's (internal/codemode).
// jsvalue.Scope puts it, then sanitize.js, then the prelude's own
// statements in one strict function scope, so the names declared here are
// visible to the prelude and to nothing else.
//
// It captures, once, the built-ins both preludes reach for after user code
// has started: user code may overwrite JSON.stringify, Object.keys or
// Array.prototype.push, and must not change what the host receives. (What
// one prelude alone uses it captures itself, the same way, so the other
// does not pay for it: run_code's string handling is in its prelude.js.)
// Methods and getters are captured uncurried (see uncurry): a prelude
// calls mapForEach(map, fn), never map.forEach(fn) or anything through
// Function.prototype.call at run time.
//
// The helpers after the captures build results without consulting
// anything user code can change: prototype-less arrays (newArray) and
// objects (objectCreate(null)) filled with push and setKey, brand checks,
// and never-throwing readers.

const global = globalThis;

// Statics.
const { apply } = Reflect;
const {
  keys: objectKeys,
  getOwnPropertyDescriptor,
  getPrototypeOf,
  setPrototypeOf,
  defineProperty,
  create: objectCreate,
  hasOwn,
} = Object;
const isArray = Array.isArray;
const isView = ArrayBuffer.isView;
const stringify = JSON.stringify;

// Constructors and prototypes.
const StringCtor = String;
const ErrorCtor = Error;
const WeakSetCtor = WeakSet;
const ObjectPrototype = Object.prototype;
const ArrayPrototype = Array.prototype;
const ErrorPrototype = Error.prototype;
const PromisePrototype = Promise.prototype;

// uncurry turns a method into a function of the receiver and the method's
// arguments: uncurry(Map.prototype.forEach)(map, fn) runs the built-in
// forEach on map, whatever the program later does to Map.prototype or
// Function.prototype.call (the bound call is the one captured here). In
// the interpreter, where a prelude's cold code runs, such a call is as fast
// as a method call; Reflect.apply with an argument array is several times
// slower.
const uncurry = Function.prototype.bind.bind(Function.prototype.call);

// Methods and getters, uncurried: receiver first.
const getter = (proto, name) => uncurry(getOwnPropertyDescriptor(proto, name).get);
const functionToString = uncurry(Function.prototype.toString);
const isPrototypeOf = uncurry(Object.prototype.isPrototypeOf);
const hasOwnProperty = uncurry(Object.prototype.hasOwnProperty);
const stringStartsWith = uncurry(String.prototype.startsWith);
const symbolToString = uncurry(Symbol.prototype.toString);
const bigintToString = uncurry(BigInt.prototype.toString);
const numberValueOf = uncurry(Number.prototype.valueOf);
const stringValueOf = uncurry(String.prototype.valueOf);
const booleanValueOf = uncurry(Boolean.prototype.valueOf);
const bigintValueOf = uncurry(BigInt.prototype.valueOf);
const symbolValueOf = uncurry(Symbol.prototype.valueOf);
const mapSize = getter(Map.prototype, "size");
const mapForEach = uncurry(Map.prototype.forEach);
const setSize = getter(Set.prototype, "size");
const setForEach = uncurry(Set.prototype.forEach);
const weakMapHas = uncurry(WeakMap.prototype.has);
const weakSetHas = uncurry(WeakSet.prototype.has);
const weakSetAdd = uncurry(WeakSet.prototype.add);
const dateGetTime = uncurry(Date.prototype.getTime);
const dateToISOString = uncurry(Date.prototype.toISOString);
const regexpSource = getter(RegExp.prototype, "source");
const regexpFlags = getter(RegExp.prototype, "flags");
const typedArrayPrototype = getPrototypeOf(Uint8Array.prototype);
const typedArrayTag = getter(typedArrayPrototype, Symbol.toStringTag);
const typedArrayLength = getter(typedArrayPrototype, "length");
const arrayBufferByteLength = getter(ArrayBuffer.prototype, "byteLength");
const dataViewByteLength = getter(DataView.prototype, "byteLength");

// brand reports whether fn (an uncurried built-in method or getter that
// throws on the wrong receiver) accepts v: a check that neither instanceof
// tricks nor Symbol.toStringTag can fool.
function brand(fn, v) {
  try {
    fn(v);
    return true;
  } catch {
    return false;
  }
}

// newArray returns an array without a prototype: no index setter or
// toJSON a script plants on Array.prototype can reach it.
function newArray() {
  const a = [];
  setPrototypeOf(a, null);
  return a;
}

// push and setKey write to the prototype-less arrays (newArray) and
// objects (objectCreate(null)) a prelude builds: with no prototype there is
// no setter a script could have planted, so a plain assignment (three
// times faster than defineProperty) is safe.
function push(arr, value) {
  arr[arr.length] = value;
}

function setKey(obj, key, value) {
  obj[key] = value;
}

// isError reports whether Error.prototype is on v's prototype chain
// (v instanceof Error, never throwing).
function isError(v) {
  try {
    return isPrototypeOf(ErrorPrototype, v);
  } catch {
    return false;
  }
}

// safeString reads a property that should be a string, never throwing.
function safeString(obj, key) {
  try {
    const s = obj[key];
    return typeof s === "string" ? s : "";
  } catch {
    return "";
  }
}

// errorHead describes an Error on one line: "Name: message", or the name
// alone when the message is empty, never throwing.
function errorHead(e) {
  const name = safeString(e, "name") || "Error";
  const message = safeString(e, "message");
  return message ? name + ": " + message : name;
}

// functionLabel renders a function as Node does: [Function: name],
// [Function (anonymous)] or [class Name].
function functionLabel(f) {
  let name = "";
  try {
    const n = f.name;
    if (typeof n === "string") name = n;
  } catch {}
  let isClass = false;
  try {
    isClass = stringStartsWith(functionToString(f), "class");
  } catch {}
  if (isClass) return name ? "[class " + name + "]" : "[class (anonymous)]";
  return name ? "[Function: " + name + "]" : "[Function (anonymous)]";
}

// installSerializer registers toData as the sandbox's result serializer
// through the one-shot hook __isogate_set_serializer that the sandbox's
// bootstrap offers, and removes the hook. A result that is plain JSON data
// (isPlainData) is serialized as it is, without toData's copy: toData must
// render such data as JSON.stringify does, as makeSanitizer's sanitize
// does (its maxDepth bounds the check). toData is also the fallback the
// bootstrap uses should serializing a plain result throw after all (a
// getter or Proxy trap that throws on its second read).
//
// A string, boolean, finite number or null is passed on at once: it is
// plain data whatever the prototypes say (JSON.stringify looks for toJSON
// on objects and BigInts only), and the check's calls, cold in each new
// context, cost more than the whole run of a trivial program.
// TestSerializerFastPathAgrees holds both paths to the same JSON.
function installSerializer(toData) {
  const set = global.__isogate_set_serializer;
  delete global.__isogate_set_serializer;
  const maxDepth = toData.maxDepth;
  if (typeof set === "function") set((value) => (isPlainPrimitive(value) || isPlainData(value, maxDepth) ? value : toData(value)), toData);
}

// isPlainPrimitive reports whether v is a string, boolean, finite number
// or null: JSON data as it is.
function isPlainPrimitive(v) {
  const t = typeof v;
  return t === "string" || t === "boolean" || (t === "number" && v - v === 0) || v === null;
}
