// kit.js opens every trusted prelude isogate runs before user code:
// run_code's (internal/runcode) and call_tool_chain's (internal/codemode).
// jsvalue.Scope puts it, then sanitize.js, then the prelude's own
// statements in one strict function scope, so the names declared here are
// visible to the prelude and to nothing else.
//
// It captures, once, every built-in a prelude reaches for after user code
// has started: user code may overwrite JSON.stringify, Object.keys or
// Array.prototype.push, and must not change what the host receives. A
// prelude calls methods through apply(method, receiver, args), never
// through the receiver's own properties or Function.prototype.call.
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
  is: objectIs,
  hasOwn,
} = Object;
const isArray = Array.isArray;
const isView = ArrayBuffer.isView;
const stringify = JSON.stringify;
const mathFloor = Math.floor;
const dateNow = Date.now;

// Constructors and prototypes.
const StringCtor = String;
const ErrorCtor = Error;
const SyntaxErrorCtor = SyntaxError;
const WeakSetCtor = WeakSet;
const AsyncFunction = (async function () {}).constructor;
const ObjectPrototype = Object.prototype;
const ErrorPrototype = Error.prototype;
const PromisePrototype = Promise.prototype;

// Methods and getters, called with apply.
const getter = (proto, name) => getOwnPropertyDescriptor(proto, name).get;
const functionToString = Function.prototype.toString;
const isPrototypeOf = Object.prototype.isPrototypeOf;
const hasOwnProperty = Object.prototype.hasOwnProperty;
const arrayJoin = Array.prototype.join;
const stringSlice = String.prototype.slice;
const stringIndexOf = String.prototype.indexOf;
const stringSplit = String.prototype.split;
const stringReplace = String.prototype.replace;
const stringStartsWith = String.prototype.startsWith;
const regexpTest = RegExp.prototype.test;
const symbolToString = Symbol.prototype.toString;
const bigintToString = BigInt.prototype.toString;
const numberValueOf = Number.prototype.valueOf;
const stringValueOf = String.prototype.valueOf;
const booleanValueOf = Boolean.prototype.valueOf;
const bigintValueOf = BigInt.prototype.valueOf;
const symbolValueOf = Symbol.prototype.valueOf;
const mapSize = getter(Map.prototype, "size");
const mapForEach = Map.prototype.forEach;
const setSize = getter(Set.prototype, "size");
const setForEach = Set.prototype.forEach;
const weakMapHas = WeakMap.prototype.has;
const weakSetHas = WeakSet.prototype.has;
const weakSetAdd = WeakSet.prototype.add;
const dateGetTime = Date.prototype.getTime;
const dateToISOString = Date.prototype.toISOString;
const regexpSource = getter(RegExp.prototype, "source");
const regexpFlags = getter(RegExp.prototype, "flags");
const typedArrayPrototype = getPrototypeOf(Uint8Array.prototype);
const typedArrayTag = getter(typedArrayPrototype, Symbol.toStringTag);
const typedArrayLength = getter(typedArrayPrototype, "length");
const arrayBufferByteLength = getter(ArrayBuffer.prototype, "byteLength");
const dataViewByteLength = getter(DataView.prototype, "byteLength");

// brand reports whether fn (a built-in method or getter that throws on the
// wrong receiver) accepts v: a check that neither instanceof tricks nor
// Symbol.toStringTag can fool.
function brand(fn, v) {
  try {
    apply(fn, v, []);
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

// join joins an array's items as Array.prototype.join does.
function join(parts, sep) {
  return apply(arrayJoin, parts, [sep]);
}

// isError reports whether Error.prototype is on v's prototype chain
// (v instanceof Error, never throwing).
function isError(v) {
  try {
    return apply(isPrototypeOf, ErrorPrototype, [v]);
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
    isClass = apply(stringStartsWith, apply(functionToString, f, []), ["class"]);
  } catch {}
  if (isClass) return name ? "[class " + name + "]" : "[class (anonymous)]";
  return name ? "[Function: " + name + "]" : "[Function (anonymous)]";
}

// installSerializer registers toData as the sandbox's result serializer
// through the one-shot hook __isogate_set_serializer that the sandbox's
// bootstrap offers, and removes the hook.
function installSerializer(toData) {
  const set = global.__isogate_set_serializer;
  delete global.__isogate_set_serializer;
  if (typeof set === "function") set(toData);
}
