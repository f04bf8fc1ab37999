// Package conformance is a small ECMAScript conformance set (ES2015 to
// ES2022 plus Intl, JSON edge cases and error stacks) used to compare the
// semantics of V8 and goja.
//
// Each check is the body of an async function that returns true when the
// engine behaves as the specification says. A false result, a throw, a
// syntax error or a timeout is a failure. Checks only use ECMAScript and
// ECMA-402 built-ins: no console, timers or host objects.
package conformance

import (
	"context"
	"encoding/json"
	"time"
)

// Check is one conformance check.
type Check struct {
	// Name is short and unique.
	Name string
	// Edition is where the feature comes from ("ES2015" … "ES2022",
	// "Intl", "JSON", "misc").
	Edition string
	// Source is the body of an async function returning true on pass.
	Source string
}

// SourceSensitive reports whether the check inspects its own source text
// (Function.prototype.toString), which a transform such as esbuild's
// rewrites: run through a transform, its failure says nothing about the
// engine.
func (c Check) SourceSensitive() bool { return sourceSensitive[c.Name] }

var sourceSensitive = map[string]bool{"function-to-string": true}

// Outcome is a check's result on one engine.
type Outcome struct {
	Check  Check
	Pass   bool
	Detail string // why it failed
}

// Runner evaluates the body of an async function and returns the JSON of
// its awaited result.
type Runner func(ctx context.Context, body string) (json.RawMessage, error)

// Run evaluates every check with run, each under timeout.
func Run(ctx context.Context, checks []Check, timeout time.Duration, run Runner) []Outcome {
	out := make([]Outcome, len(checks))
	for i, c := range checks {
		out[i] = runOne(ctx, c, timeout, run)
	}
	return out
}

func runOne(ctx context.Context, c Check, timeout time.Duration, run Runner) Outcome {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	got, err := run(ctx, c.Source)
	switch {
	case err != nil:
		return Outcome{Check: c, Detail: oneLine(err.Error())}
	case string(got) != "true":
		return Outcome{Check: c, Detail: "returned " + oneLine(string(got))}
	}
	return Outcome{Check: c, Pass: true}
}

func oneLine(s string) string {
	for i, r := range s {
		if r == '\n' {
			s = s[:i]
			break
		}
	}
	if len(s) > 160 {
		s = s[:160] + "…"
	}
	return s
}

// Passed counts passing outcomes.
func Passed(outcomes []Outcome) int {
	n := 0
	for _, o := range outcomes {
		if o.Pass {
			n++
		}
	}
	return n
}

// Checks is the conformance set.
var Checks = []Check{
	// ES2015
	{"let-const-block-scope", "ES2015", `
let a = 1; { let a = 2; }
const c = 3; let threw = false;
try { eval("c = 4"); } catch (e) { threw = e instanceof TypeError; }
const fns = []; for (let i = 0; i < 3; i++) fns.push(() => i);
return a === 1 && threw && fns.map(f => f()).join() === "0,1,2";`},
	{"tdz", "ES2015", `
try { x; let x = 1; return false; } catch (e) { return e instanceof ReferenceError; }`},
	{"arrow-lexical-this", "ES2015", `
const o = { v: 42, f() { return (() => this.v)(); } };
return o.f() === 42 && (() => {}).prototype === undefined;`},
	{"classes-inheritance-super", "ES2015", `
class A { constructor(x) { this.x = x; } get double() { return this.x * 2; } static make() { return new this(1); } hi() { return "A" + this.x; } }
class B extends A { constructor() { super(5); } hi() { return "B" + super.hi(); } }
const b = new B();
return b.double === 10 && b.hi() === "BA5" && B.make() instanceof B && Object.getPrototypeOf(B) === A;`},
	{"class-call-throws", "ES2015", `
class A {} try { A(); return false; } catch (e) { return e instanceof TypeError; }`},
	{"new-target", "ES2015", `
function F() { return new.target === F; }
class P { constructor() { this.t = new.target; } } class Q extends P {}
return new F() instanceof F && new Q().t === Q;`},
	{"template-literals-tagged", "ES2015", `
const tag = (s, ...v) => s.raw.join("|") + ":" + v.join(",");
return tag` + "`a\\n${1}b${2}`" + ` === "a\\n|b|:1,2" && ` + "`${1 + 1}x`" + ` === "2x";`},
	{"destructuring-defaults-rest", "ES2015", `
const { a, b: { c = 5 } = {}, ...rest } = { a: 1, d: 4, e: 5 };
const [x, , y = 3, ...zs] = [1, 2, undefined, 4, 5];
return a === 1 && c === 5 && rest.d === 4 && rest.e === 5 && x === 1 && y === 3 && zs.join() === "4,5";`},
	{"spread-default-params", "ES2015", `
function f(a, b = a * 2, ...r) { return a + b + r.length; }
return f(1) === 3 && f(...[1, 1, 9, 9]) === 4 && Math.max(...[1, 5, 3]) === 5 && f.length === 1;`},
	{"map-set-samevaluezero", "ES2015", `
const s = new Set([NaN, NaN, 0, -0, "0"]);
const m = new Map([[NaN, 1]]);
const order = [...new Map([[3, "c"], [1, "a"], [2, "b"]]).keys()].join();
return s.size === 3 && m.get(NaN) === 1 && order === "3,1,2";`},
	{"weakmap-weakset", "ES2015", `
const k = {}; const wm = new WeakMap([[k, 1]]); const ws = new WeakSet([k]);
let threw = false; try { wm.set(1, 1); } catch (e) { threw = e instanceof TypeError; }
return wm.get(k) === 1 && ws.has(k) && threw;`},
	{"symbols", "ES2015", `
const s = Symbol("x");
const o = { [s]: 1, a: 2 };
return typeof s === "symbol" && s.toString() === "Symbol(x)" && o[s] === 1 &&
  Object.keys(o).join() === "a" && Symbol.for("k") === Symbol.for("k") && Symbol.keyFor(Symbol.for("k")) === "k";`},
	{"well-known-symbols", "ES2015", `
const money = { [Symbol.toPrimitive](hint) { return hint === "number" ? 42 : "forty-two"; } };
class Tagged { get [Symbol.toStringTag]() { return "Tagged"; } }
class Even { static [Symbol.hasInstance](n) { return n % 2 === 0; } }
return +money === 42 && String(money) === "forty-two" &&
  Object.prototype.toString.call(new Tagged()) === "[object Tagged]" && (2 instanceof Even);`},
	{"iterator-protocol", "ES2015", `
const it = { from: 1, to: 4, [Symbol.iterator]() { let c = this.from, t = this.to; return { next: () => c <= t ? { value: c++, done: false } : { value: undefined, done: true } }; } };
return [...it].join() === "1,2,3,4" && Array.from(it, x => x * 2).join() === "2,4,6,8";`},
	{"iterator-close", "ES2015", `
let closed = 0;
const it = { [Symbol.iterator]() { return { next: () => ({ value: 1, done: false }), return() { closed++; return {}; } }; } };
const [a] = it;
for (const x of it) break;
return a === 1 && closed === 2;`},
	{"generators", "ES2015", `
function* inner() { const x = yield 1; yield x * 2; }
function* outer() { yield* inner(); try { yield 3; } finally { yield 4; } }
const g = outer();
const r = [g.next().value, g.next(5).value, g.next().value, g.return(9).value, g.next().value, g.next().done];
return r.join() === "1,10,3,4,9,true";`},
	{"proxy-traps", "ES2015", `
const log = [];
const p = new Proxy({ a: 1 }, {
  get(t, k, r) { log.push("get:" + String(k)); return Reflect.get(t, k, r); },
  has(t, k) { return k === "hidden" || k in t; },
  set(t, k, v) { t[k] = v * 2; return true; },
  deleteProperty(t, k) { log.push("del:" + k); return delete t[k]; },
});
p.b = 2;
return p.a === 1 && p.b === 4 && ("hidden" in p) && delete p.a && log.includes("del:a") && log.includes("get:b");`},
	{"proxy-revocable-invariants", "ES2015", `
const { proxy, revoke } = Proxy.revocable({}, {}); revoke();
let revoked = false; try { proxy.x; } catch (e) { revoked = e instanceof TypeError; }
const frozen = Object.freeze({ a: 1 });
let invariant = false; try { new Proxy(frozen, { get: () => 2 }).a; } catch (e) { invariant = e instanceof TypeError; }
return revoked && invariant;`},
	{"reflect", "ES2015", `
class A { constructor() { this.nt = new.target; } } class B {}
const o = Reflect.construct(A, [], B);
return Reflect.ownKeys({ b: 1, 2: 1, a: 1, 1: 1, [Symbol.iterator]: 1 }).map(String).join() === "1,2,b,a,Symbol(Symbol.iterator)" &&
  o.nt === B && Reflect.apply(Math.max, null, [1, 3, 2]) === 3 && Reflect.has({ x: 1 }, "x") &&
  Reflect.defineProperty(Object.freeze({}), "x", { value: 1 }) === false;`},
	{"promise-microtask-order", "ES2015", `
const log = [];
const p = Promise.resolve().then(() => log.push("micro1")).then(() => log.push("micro3"));
Promise.resolve().then(() => log.push("micro2"));
log.push("sync");
await p;
return log.join() === "sync,micro1,micro2,micro3";`},
	{"typed-arrays-dataview", "ES2015", `
const buf = new ArrayBuffer(8); const dv = new DataView(buf);
dv.setUint16(0, 0x1234); dv.setUint16(2, 0x1234, true);
const u8 = new Uint8Array(buf);
const c = new Uint8ClampedArray([300, -5]);
return u8[0] === 0x12 && u8[1] === 0x34 && u8[2] === 0x34 && u8[3] === 0x12 && c[0] === 255 && c[1] === 0 &&
  new Float64Array([1.5]).buffer.byteLength === 8 && Array.from(new Int8Array([255])).join() === "-1";`},
	{"object-assign-is", "ES2015", `
const o = Object.assign({}, { a: 1 }, null, { b: 2 });
return o.a === 1 && o.b === 2 && Object.is(NaN, NaN) && !Object.is(0, -0);`},
	{"string-es2015", "ES2015", `
return "abc".includes("b") && "abc".startsWith("ab") && "abc".endsWith("bc") && "ab".repeat(3) === "ababab" &&
  String.raw` + "`a\\n${1}`" + ` === "a\\n1" && String.fromCodePoint(0x1F600).codePointAt(0) === 0x1F600 &&
  [..."a😀"].length === 2 && "\u{1F600}".length === 2;`},
	{"array-es2015", "ES2015", `
return Array.from("abc").join() === "a,b,c" && Array.of(7).length === 1 && [1, 2, 3].find(x => x > 1) === 2 &&
  [1, 2, 3].findIndex(x => x > 5) === -1 && new Array(3).fill(0).join() === "0,0,0" &&
  [1, 2, 3, 4, 5].copyWithin(0, 3).join() === "4,5,3,4,5" && [...[1, 2].entries()].join(";") === "0,1;1,2";`},
	{"number-math-es2015", "ES2015", `
return Number.isInteger(5.0) && !Number.isInteger(5.5) && Number.isSafeInteger(2 ** 53 - 1) && !Number.isSafeInteger(2 ** 53) &&
  Number.EPSILON > 0 && Math.trunc(-4.7) === -4 && Math.sign(-3) === -1 && Math.hypot(3, 4) === 5 &&
  Math.clz32(1) === 31 && Math.imul(3, 4) === 12 && Math.fround(5.5) === 5.5 && Math.cbrt(27) === 3 && 0o17 === 15 && 0b101 === 5;`},
	{"regexp-sticky-unicode", "ES2015", `
const re = /foo/y; re.lastIndex = 3;
return re.test("barfoo") && !/^.$/.test("😀") && /^.$/u.test("😀") && /\u{1F600}/u.test("😀") && /a/gimuy.flags === "gimuy";`},
	{"object-literal-extensions", "ES2015", `
const k = "dyn"; const x = 1;
const base = { hi() { return "base"; } };
const o = { x, [k + "1"]: 2, hi() { return super.hi() + "!"; }, __proto__: base };
return o.x === 1 && o.dyn1 === 2 && o.hi() === "base!";`},
	{"function-name-inference", "ES2015", `
const foo = () => {}; const o = { bar() {}, get baz() { return 1; } }; class K { static m() {} }
return foo.name === "foo" && o.bar.name === "bar" &&
  Object.getOwnPropertyDescriptor(o, "baz").get.name === "get baz" && K.m.name === "m" && foo.bind().name === "bound foo";`},
	{"subclass-builtins", "ES2015", `
class MyArr extends Array { sum() { return this.reduce((a, b) => a + b, 0); } }
class MyErr extends Error { constructor(m) { super(m); this.name = "MyErr"; } }
const a = MyArr.from([1, 2, 3]); const e = new MyErr("x");
return a instanceof MyArr && a.map(x => x).sum() === 6 && a.length === 3 && e instanceof Error && String(e) === "MyErr: x";`},
	{"labelled-statements", "ES2015", `
let out = [];
outer: for (let i = 0; i < 3; i++) { for (let j = 0; j < 3; j++) { if (j === 1) continue outer; if (i === 2) break outer; out.push(i + "" + j); } }
block: { out.push("in"); break block; out.push("never"); }
return out.join() === "00,10,in";`},

	// ES2016
	{"array-includes-nan", "ES2016", `
return [1, NaN].includes(NaN) && [1, NaN].indexOf(NaN) === -1 && ![1, 2].includes(2, 2);`},
	{"exponent-operator", "ES2016", `
let x = 2; x **= 3;
return 2 ** 10 === 1024 && (-2) ** 2 === 4 && 2 ** -1 === 0.5 && x === 8 && 2 ** 3 ** 2 === 512;`},

	// ES2017
	{"async-await-order", "ES2017", `
const log = [];
async function f() { log.push(1); await null; log.push(3); return 4; }
const p = f(); log.push(2); log.push(await p);
let caught = false; try { await (async () => { throw new RangeError("r"); })(); } catch (e) { caught = e instanceof RangeError; }
return log.join() === "1,2,3,4" && caught;`},
	{"object-values-entries", "ES2017", `
const o = { b: 2, a: 1, 1: "x" };
return Object.values(o).join() === "x,2,1" && JSON.stringify(Object.entries(o)) === '[["1","x"],["b",2],["a",1]]';`},
	{"string-padding", "ES2017", `
return "5".padStart(3, "0") === "005" && "ab".padEnd(5, "xy") === "abxyx" && "abc".padStart(2) === "abc" && "a".padStart(3) === "  a";`},
	{"get-own-property-descriptors", "ES2017", `
const src = { get g() { return 1; } };
const d = Object.getOwnPropertyDescriptors(src);
const copy = Object.defineProperties({}, d);
return typeof d.g.get === "function" && Object.getOwnPropertyDescriptor(copy, "g").get === d.g.get;`},
	{"trailing-commas-params", "ES2017", `
function f(a, b,) { return a + b; }
return f(1, 2,) === 3 && f.length === 2;`},

	// ES2018
	{"object-rest-spread", "ES2018", `
const { a, ...rest } = { a: 1, b: 2, c: 3 };
const merged = { ...rest, d: 4, ...null };
return a === 1 && JSON.stringify(merged) === '{"b":2,"c":3,"d":4}';`},
	{"async-generators-for-await", "ES2018", `
async function* gen() { for (let i = 0; i < 3; i++) { await null; yield i; } }
let sum = 0; for await (const x of gen()) sum += x;
return sum === 3;`},
	{"async-iterator-protocol", "ES2018", `
const custom = { [Symbol.asyncIterator]() { let n = 0; return { next: async () => n < 2 ? { value: n++, done: false } : { done: true } }; } };
const seen = []; for await (const x of custom) seen.push(x);
let syncToo = 0; for await (const v of [Promise.resolve(5), 6]) syncToo += v;
return typeof Symbol.asyncIterator === "symbol" && seen.join() === "0,1" && syncToo === 11;`},
	{"async-generator-return-yield-star", "ES2018", `
async function* inner() { yield 1; yield 2; }
async function* outer() { try { yield* inner(); yield 3; } finally { await null; } }
const g = outer();
const a = await g.next(); const b = await g.next(); const c = await g.return(7); const d = await g.next();
return a.value === 1 && b.value === 2 && c.value === 7 && c.done && d.done;`},
	{"promise-finally", "ES2018", `
let ran = 0;
const v = await Promise.resolve(1).finally(() => { ran++; return 99; });
let r; try { await Promise.reject(2).finally(() => ran++); } catch (e) { r = e; }
return v === 1 && r === 2 && ran === 2;`},
	{"regexp-named-groups", "ES2018", `
const m = /(?<year>\d{4})-(?<month>\d{2})/.exec("on 2024-05");
return m.groups.year === "2024" && m.groups.month === "05" &&
  "2024-05".replace(/(?<y>\d+)-(?<m>\d+)/, "$<m>/$<y>") === "05/2024" && /(?<a>x)\k<a>/.test("xx");`},
	{"regexp-lookbehind", "ES2018", `
return "$42 and €7".match(/(?<=\$)\d+/)[0] === "42" && "10 USD, 20 EUR".match(/\d+(?= EUR)/)[0] === "20" &&
  /(?<!\$)\b\d+/.exec("$5 7")[0] === "7" && "abc".replace(/(?<!b)c/, "X") === "abc" && "ac".replace(/(?<!b)c/, "X") === "aX";`},
	{"regexp-dotall", "ES2018", `
return /a.b/s.test("a\nb") && !/a.b/.test("a\nb") && /a/s.dotAll === true;`},
	{"regexp-unicode-property-escapes", "ES2018", `
return /^\p{Script=Greek}+$/u.test("αβγ") && /\p{Lu}/u.test("É") && !/\p{Lu}/u.test("é") && /^\P{L}$/u.test("1");`},
	{"template-literal-revision", "ES2018", `
const raw = (s) => s[0] === undefined && s.raw[0] === "\\unicode";
return raw` + "`\\unicode`" + `;`},

	// ES2019
	{"array-flat-flatmap", "ES2019", `
return JSON.stringify([1, [2, [3, [4]]]].flat()) === "[1,2,[3,[4]]]" && [1, [2, [3, [4]]]].flat(Infinity).length === 4 &&
  [1, 2].flatMap(x => [x, x * 10]).join() === "1,10,2,20" && [[1], [2]].flatMap(x => x).join() === "1,2";`},
	{"object-from-entries", "ES2019", `
const o = Object.fromEntries(new Map([["a", 1], ["b", 2]]));
return o.a === 1 && o.b === 2 && Object.fromEntries([["x", 1]].values()).x === 1;`},
	{"string-trim-start-end", "ES2019", `
return "  a  ".trimStart() === "a  " && "  a  ".trimEnd() === "  a" && String.prototype.trimLeft === String.prototype.trimStart;`},
	{"optional-catch-binding", "ES2019", `
try { throw 1; } catch { return true; }`},
	{"symbol-description", "ES2019", `
return Symbol("d").description === "d" && Symbol().description === undefined;`},
	{"function-to-string", "ES2019", `
function /* c */ f ( a ) { return a ; }
return f.toString() === "function /* c */ f ( a ) { return a ; }" && Math.max.toString().includes("[native code]");`},
	{"stable-sort", "ES2019", `
const a = Array.from({ length: 100 }, (_, i) => ({ k: i % 3, i }));
a.sort((x, y) => x.k - y.k);
let stable = true; for (let i = 1; i < a.length; i++) if (a[i - 1].k === a[i].k && a[i - 1].i > a[i].i) stable = false;
return stable && [10, 9, 1].sort().join() === "1,10,9";`},
	{"well-formed-json-stringify", "ES2019", `
return JSON.stringify("\uD800") === '"\\ud800"' && JSON.stringify("\uD83D\uDE00") === '"😀"';`},
	{"json-superset", "ES2019", `
return eval('"\u2028\u2029"').length === 2;`},

	// ES2020
	{"bigint", "ES2020", `
const big = 2n ** 64n;
let mixed = false; try { 1n + 1; } catch (e) { mixed = e instanceof TypeError; }
return big === 18446744073709551616n && typeof big === "bigint" && BigInt.asUintN(8, 257n) === 1n &&
  BigInt.asIntN(8, 255n) === -1n && (7n / 2n) === 3n && BigInt("0x10") === 16n && mixed && 10n > 9 && String(-5n) === "-5";`},
	{"bigint-typed-arrays", "ES2020", `
const a = new BigInt64Array(1); a[0] = -1n;
return new BigUint64Array(a.buffer)[0] === 2n ** 64n - 1n;`},
	{"optional-chaining", "ES2020", `
const o = { a: { b: { c: 1 } }, f() { return this.a; } };
const n = null;
return o?.a?.b?.c === 1 && n?.a.b.c === undefined && o.x?.y === undefined && o?.["a"]?.b.c === 1 &&
  o.f?.() === o.a && o.g?.() === undefined && (n?.a)?.b === undefined;`},
	{"nullish-coalescing", "ES2020", `
return (0 ?? 1) === 0 && ("" ?? "x") === "" && (null ?? 1) === 1 && (undefined ?? false) === false && ((null || undefined) ?? 3) === 3;`},
	{"promise-all-settled", "ES2020", `
const r = await Promise.allSettled([Promise.resolve(1), Promise.reject(2)]);
return r[0].status === "fulfilled" && r[0].value === 1 && r[1].status === "rejected" && r[1].reason === 2;`},
	{"string-match-all", "ES2020", `
const ms = [..."a1b22c333".matchAll(/(?<d>\d+)/g)];
let threw = false; try { "x".matchAll(/x/); } catch (e) { threw = e instanceof TypeError; }
return ms.length === 3 && ms[1].groups.d === "22" && ms[2].index === 6 && threw;`},
	{"globalthis", "ES2020", `
return typeof globalThis === "object" && globalThis.Array === Array;`},
	{"for-in-order", "ES2020", `
const o = { b: 1, 2: 1, a: 1, 1: 1 }; const keys = [];
for (const k in Object.create(o, { own: { value: 1, enumerable: true } })) keys.push(k);
return keys.join() === "own,1,2,b,a";`},

	// ES2021
	{"logical-assignment", "ES2021", `
let a = null, b = 0, c = 1, calls = 0;
a ??= 5; b ||= 6; c &&= 7;
const o = { x: 1 }; o.x ??= (calls++, 2);
return a === 5 && b === 6 && c === 7 && o.x === 1 && calls === 0;`},
	{"numeric-separators", "ES2021", `
return 1_000_000 === 1e6 && 0xFF_FF === 65535 && 1_0.5_0 === 10.5;`},
	{"string-replace-all", "ES2021", `
let threw = false; try { "a".replaceAll(/a/, "b"); } catch (e) { threw = e instanceof TypeError; }
return "a.b.c".replaceAll(".", "/") === "a/b/c" && "aaa".replaceAll(/a/g, (m, i) => i) === "012" && threw;`},
	{"promise-any-aggregate-error", "ES2021", `
const v = await Promise.any([Promise.reject(1), Promise.resolve(2)]);
try { await Promise.any([Promise.reject(1), Promise.reject(2)]); return false; }
catch (e) { return v === 2 && e instanceof AggregateError && e.errors.join() === "1,2"; }`},
	{"weakref-finalization-registry", "ES2021", `
const target = { x: 1 }; const ref = new WeakRef(target);
const reg = new FinalizationRegistry(() => {}); reg.register(target, "held"); reg.unregister(target);
return ref.deref() === target && typeof FinalizationRegistry.prototype.register === "function";`},

	// ES2022
	{"class-fields", "ES2022", `
class A { x = 1; y = this.x + 1; static s = "st"; ["comp" + 1] = 3; }
const a = new A();
return a.x === 1 && a.y === 2 && A.s === "st" && a.comp1 === 3 && Object.keys(a).join() === "x,y,comp1";`},
	{"private-fields-methods", "ES2022", `
class Counter {
  #n = 0; static #instances = 0;
  #bump() { return ++this.#n; }
  get #doubled() { return this.#n * 2; }
  constructor() { Counter.#instances++; }
  inc() { this.#bump(); return this; }
  get value() { return this.#doubled; }
  static count() { return Counter.#instances; }
  static isCounter(o) { return #n in o; }
}
const c = new Counter().inc().inc(); new Counter();
let threw = false; try { Counter.prototype.inc.call({}); } catch (e) { threw = e instanceof TypeError; }
return c.value === 4 && Counter.count() === 2 && Counter.isCounter(c) && !Counter.isCounter({}) && threw;`},
	{"class-static-blocks", "ES2022", `
let ran = 0;
class C { static x = 1; static { ran++; this.y = this.x + 1; } }
return ran === 1 && C.y === 2;`},
	{"array-string-at", "ES2022", `
return [1, 2, 3].at(-1) === 3 && [1, 2, 3].at(5) === undefined && "abc".at(-1) === "c" && new Uint8Array([7, 8]).at(-2) === 7;`},
	{"object-has-own", "ES2022", `
const o = Object.create({ inherited: 1 }); o.own = 1;
return Object.hasOwn(o, "own") && !Object.hasOwn(o, "inherited") && Object.hasOwn(Object.create(null, { k: { value: 1 } }), "k");`},
	{"error-cause", "ES2022", `
const root = new Error("root");
const e = new TypeError("wrapped", { cause: root });
return e.cause === root && !("cause" in new Error("x")) && new AggregateError([], "m", { cause: 1 }).cause === 1;`},
	{"regexp-match-indices", "ES2022", `
const m = /a(?<Z>z)?(b)/d.exec("xxab");
return m.indices[0][0] === 2 && m.indices[0][1] === 4 && m.indices[2][0] === 3 && m.indices[1] === undefined &&
  m.indices.groups.Z === undefined && /x/d.hasIndices === true;`},

	// Intl (ECMA-402)
	{"intl-number-format", "Intl", `
return new Intl.NumberFormat("en-US").format(1234567.891) === "1,234,567.891" &&
  new Intl.NumberFormat("de-DE").format(1234.5) === "1.234,5" &&
  new Intl.NumberFormat("en-US", { style: "currency", currency: "USD" }).format(3.5) === "$3.50";`},
	{"intl-date-time-format", "Intl", `
const d = new Date(Date.UTC(2020, 0, 15, 12, 0, 0));
return new Intl.DateTimeFormat("en-US", { timeZone: "UTC", year: "numeric", month: "2-digit", day: "2-digit" }).format(d) === "01/15/2020" &&
  new Intl.DateTimeFormat("en-GB", { timeZone: "UTC", dateStyle: "long" }).format(d) === "15 January 2020";`},
	{"intl-collator-plural-rules", "Intl", `
return ["b", "a", "C"].sort(new Intl.Collator("en").compare).join("") === "abC" &&
  new Intl.PluralRules("en-US").select(1) === "one" && new Intl.PluralRules("en-US").select(2) === "other" &&
  "ä".localeCompare("z", "de") < 0;`},
	{"to-locale-string", "Intl", `
return (1234.5).toLocaleString("en-US") === "1,234.5" && "I".toLocaleLowerCase("tr") === "ı" &&
  new Date(0).toLocaleDateString("en-US", { timeZone: "UTC" }) === "1/1/1970";`},

	// JSON edge cases
	{"json-proto-key", "JSON", `
const o = JSON.parse('{"__proto__": 1, "a": {"__proto__": null}}');
return Object.keys(o)[0] === "__proto__" && Object.getPrototypeOf(o) === Object.prototype && o.a.__proto__ === null;`},
	{"json-stringify-dropping", "JSON", `
return JSON.stringify({ a: undefined, b: () => 1, c: NaN, d: [undefined, () => 1, Symbol()], e: -0, f: Infinity, [Symbol()]: 1 }) ===
  '{"c":null,"d":[null,null,null],"e":0,"f":null}' && JSON.stringify(undefined) === undefined && JSON.stringify(1e21) === "1e+21";`},
	{"json-replacer-indent-tojson", "JSON", `
const o = { b: 2, a: 1, d: { toJSON(k) { return "D:" + k; } }, dt: new Date(0) };
return JSON.stringify(o, ["a", "b", "d"], 2) === '{\n  "a": 1,\n  "b": 2,\n  "d": "D:d"\n}' &&
  JSON.stringify(o, (k, v) => typeof v === "number" ? v * 10 : v).includes('"b":20') &&
  JSON.stringify({ dt: new Date(0) }) === '{"dt":"1970-01-01T00:00:00.000Z"}' && JSON.stringify([1], null, "--") === "[\n--1\n]";`},
	{"json-parse-reviver-errors", "JSON", `
const o = JSON.parse('{"a":[1,2],"b":{"c":3}}', (k, v) => typeof v === "number" ? v + 1 : v);
let bad = 0;
for (const s of ['{"a":1,}', "[1,]", "{'a':1}", "01", '"\t"', "NaN", ""]) { try { JSON.parse(s); } catch (e) { if (e instanceof SyntaxError) bad++; } }
return o.a.join() === "2,3" && o.b.c === 4 && bad === 7 && JSON.parse(" [1e2, -0.5, true, null] ").join() === "100,-0.5,true,";`},
	{"json-cycle-bigint-errors", "JSON", `
const a = {}; a.self = a;
let cyc = false, big = false;
try { JSON.stringify(a); } catch (e) { cyc = e instanceof TypeError; }
try { JSON.stringify({ n: 1n }); } catch (e) { big = e instanceof TypeError; }
return cyc && big;`},
	{"json-unicode-escapes", "JSON", `
return JSON.parse('"\\u00e9\\n\\ud83d\\ude00"') === "é\n😀" && JSON.stringify("\u0007\u2028") === '"\\u0007\u2028"';`},

	// misc
	{"error-stack", "misc", `
function innerFn() { return new Error("boom"); }
function outerFn() { return innerFn(); }
const e = outerFn();
return typeof e.stack === "string" && e.stack.includes("boom") && e.stack.includes("innerFn") && e.stack.includes("outerFn");`},
	{"error-types", "misc", `
const kinds = [];
try { null.x; } catch (e) { kinds.push(e.constructor.name); }
try { undefinedVar; } catch (e) { kinds.push(e.constructor.name); }
try { new Array(-1); } catch (e) { kinds.push(e.constructor.name); }
try { eval("{"); } catch (e) { kinds.push(e.constructor.name); }
try { decodeURIComponent("%"); } catch (e) { kinds.push(e.constructor.name); }
return kinds.join() === "TypeError,ReferenceError,RangeError,SyntaxError,URIError" && String(new TypeError("m")) === "TypeError: m";`},
	{"strict-mode-semantics", "misc", `
"use strict";
const frozen = Object.freeze({ a: 1 });
let t1 = false; try { frozen.a = 2; } catch (e) { t1 = e instanceof TypeError; }
const f = function () { return this; };
return t1 && f() === undefined;`},
	{"sloppy-mode-semantics", "misc", `
const f = new Function("return this;");
const g = new Function("a", "a = 2; return arguments[0];");
return f() === globalThis && g(1) === 2;`},
	{"getters-setters-defineproperty", "misc", `
const o = {}; let stored = 0;
Object.defineProperty(o, "v", { get() { return stored; }, set(x) { stored = x * 2; }, enumerable: false });
o.v = 5;
Object.defineProperty(o, "ro", { value: 1, writable: false });
o.ro = 2;
return o.v === 10 && Object.keys(o).length === 0 && o.ro === 1;`},
	{"array-holes", "misc", `
const a = [, 1, , 2];
let visited = 0; a.forEach(() => visited++);
return !(0 in a) && a.length === 4 && visited === 2 && Array.from(a).includes(undefined) && a.indexOf(undefined) === -1 && Object.keys(a).join() === "1,3";`},
	{"date-parse-iso", "misc", `
const d = new Date("2020-02-29T23:59:59.999Z");
return Date.parse("2020-01-01T00:00:00Z") === 1577836800000 && d.toISOString() === "2020-02-29T23:59:59.999Z" &&
  d.getUTCDay() === 6 && new Date(Date.UTC(2020, 1, 30)).getUTCDate() === 1 && isNaN(new Date("nope"));`},
	{"number-formatting", "misc", `
return (0.1 + 0.2).toString() === "0.30000000000000004" && (255).toString(16) === "ff" && (1.005).toFixed(2) === "1.00" &&
  (123.456).toPrecision(4) === "123.5" && (1e21).toString() === "1e+21" && (-0).toString() === "0" &&
  Number("0x1f") === 31 && parseInt("08") === 8 && (25).toString(36) === "p" && (0.000001234).toExponential(2) === "1.23e-6";`},
	{"string-normalize-unicode", "misc", `
return "\u0041\u030A".normalize("NFC") === "\u00C5" && "\u00C5".normalize("NFD").length === 2 &&
  "İ".toLowerCase().length === 2 && "ß".toUpperCase() === "SS" && "abc".localeCompare("abd") < 0;`},
	{"string-split-regexp", "misc", `
return "a1b2c3".split(/\d/).join() === "a,b,c," && "a1b2c3".split(/(\d)/, 3).join() === "a,1,b" && "".split(",").length === 1 &&
  "aXbxc".split(/x/i).length === 3;`},
	{"regexp-lastindex-global", "misc", `
const re = /o/g; const found = [];
let m; while ((m = re.exec("foo boo")) !== null) found.push(m.index);
return found.join() === "1,2,5,6" && re.lastIndex === 0 && "x-y_z".replace(/[-_]/g, (c) => c === "-" ? "+" : "=") === "x+y=z";`},
	{"closures-and-hoisting", "misc", `
function outer() { return typeof hoisted === "function" && v === undefined; function hoisted() {} var v = 1; }
const counters = [0, 1].map(() => { let n = 0; return () => ++n; });
counters[0](); counters[0]();
return outer() && counters[0]() === 3 && counters[1]() === 1;`},
	{"getter-on-prototype-chain", "misc", `
class Base { get kind() { return "base:" + this.id; } }
class Derived extends Base { constructor() { super(); this.id = 7; } get kind() { return "derived/" + super.kind; } }
return new Derived().kind === "derived/base:7" && Object.getOwnPropertyNames(Derived.prototype).join() === "constructor,kind";`},
	{"array-sort-comparator-misuse", "misc", `
const a = [3, 1, 2]; a.sort(() => 0);
const u = [3, undefined, 1, , 2].sort();
return a.join() === "3,1,2" && u.length === 5 && u[3] === undefined && !(4 in u) && u.slice(0, 3).join() === "1,2,3";`},
	{"deep-recursion-range-error", "misc", `
function r(n) { return r(n + 1) + 1; }
try { r(0); return false; } catch (e) { return e instanceof RangeError; }`},
}
