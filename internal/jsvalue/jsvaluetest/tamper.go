// Package jsvaluetest holds what the tests of isogate's trusted preludes
// (run_code's and code mode's, both built on jsvalue's kit) share.
package jsvaluetest

import "strings"

// Tamper is one line of JavaScript that overwrites the built-ins a
// prelude could reach for after user code has started: JSON, Object,
// Reflect and Array statics, the prototype methods and getters of Array,
// String, Map, Set, Date, RegExp, Function, Symbol, BigInt, Number and
// Boolean, Math.floor, and the global String, Error and Symbol. Each
// replacement throws "tampered" or returns "forged". Placed as a line of a
// program after the program has built its values, it must change nothing
// the host receives: the result, the error, the console lines and the
// arguments of tool calls. It leaves alone what the program itself still
// needs afterwards (Array.prototype[Symbol.iterator], Map.prototype.set,
// Set.prototype.add, Promise) and the documented hooks of JSON semantics
// (toJSON).
var Tamper = strings.Join([]string{
	`(() => {`,
	`const E = Error; const poison = function () { throw new E("tampered") };`,
	`const forged = function () { return "forged" };`,
	`const over = (obj, names, f) => { for (let i = 0; i < names.length; i++) Object.defineProperty(obj, names[i], {value: f, writable: true, configurable: true}) };`,
	`const overGet = (obj, names) => { for (let i = 0; i < names.length; i++) Object.defineProperty(obj, names[i], {get: poison, configurable: true}) };`,
	`const typed = Object.getPrototypeOf(Uint8Array.prototype);`,
	`overGet(Map.prototype, ["size"]); overGet(Set.prototype, ["size"]);`,
	`overGet(RegExp.prototype, ["source", "flags"]);`,
	`overGet(typed, ["length", Symbol.toStringTag]); overGet(ArrayBuffer.prototype, ["byteLength"]); overGet(DataView.prototype, ["byteLength"]);`,
	`over(JSON, ["stringify", "parse"], forged);`,
	`over(Array.prototype, ["push", "pop", "join", "map", "forEach", "slice", "splice", "indexOf", "includes", "concat", "filter", "reduce", "some", "every", "toString"], poison);`,
	`over(String.prototype, ["slice", "substring", "indexOf", "split", "replace", "replaceAll", "startsWith", "endsWith", "trim", "toString", "valueOf", "padStart", "repeat"], poison);`,
	`over(Map.prototype, ["forEach", "get", "has", "entries", "keys", "values"], poison);`,
	`over(Set.prototype, ["forEach", "has", "entries", "values"], poison);`,
	`over(WeakMap.prototype, ["has"], poison); over(WeakSet.prototype, ["has", "add"], poison);`,
	`over(Date.prototype, ["getTime", "toISOString", "toString", "valueOf"], poison); over(Date, ["now"], forged);`,
	`over(RegExp.prototype, ["test", "toString"], poison);`,
	`over(Function.prototype, ["toString", "call", "apply", "bind"], poison);`,
	`over(Symbol.prototype, ["toString", "valueOf"], poison); over(BigInt.prototype, ["toString", "valueOf"], poison);`,
	`over(Number.prototype, ["toString", "valueOf"], poison); over(Boolean.prototype, ["toString", "valueOf"], poison);`,
	`over(Object.prototype, ["isPrototypeOf", "hasOwnProperty", "toString"], poison);`,
	`over(Math, ["floor"], forged); over(ArrayBuffer, ["isView"], forged);`,
	`over(Array, ["isArray", "from", "of"], forged);`,
	`over(Reflect, ["apply", "ownKeys", "getPrototypeOf", "defineProperty"], poison);`,
	`over(Object, ["keys", "values", "entries", "assign", "create", "getPrototypeOf", "setPrototypeOf", "getOwnPropertyDescriptor", "getOwnPropertyNames", "hasOwn", "freeze", "is", "defineProperty"], poison);`,
	`globalThis.String = poison; globalThis.Error = poison; globalThis.Symbol = poison; globalThis.Proxy = poison; globalThis.WeakSet = poison;`,
	`})();`,
}, " ")
