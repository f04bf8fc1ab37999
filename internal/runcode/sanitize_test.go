package runcode

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/isogate/isogate/config"
)

func TestSanitize(t *testing.T) {
	r := newRunner(t, config.RunCodeConfig{})
	cases := []struct{ name, code, want string }{
		{"undefined", `return undefined`, `null`},
		{"undefined in object", `return {a: undefined, b: 1}`, `{"a":null,"b":1}`},
		{"undefined in array", `return [undefined, , 1]`, `[null,null,1]`},
		{"numbers", `return [NaN, Infinity, -Infinity, -0, 1.5]`, `["NaN","Infinity","-Infinity",0,1.5]`},
		{"bigint", `return {n: 12345678901234567890n, m: -1n}`, `{"m":"-1","n":"12345678901234567890"}`},
		{"symbol", `return Symbol("s")`, `"Symbol(s)"`},
		{"function", `function named() {}; return {f: named, a: () => 1, c: class K {}}`,
			`{"a":"[Function: a]","c":"[class K]","f":"[Function: named]"}`},
		{"anonymous function", `return [function () {}]`, `["[Function (anonymous)]"]`},
		{"cycle", `const o = {a: 1}; o.self = o; return o`, `{"a":1,"self":"[Circular]"}`},
		{"array cycle", `const a = [1]; a.push(a); return a`, `[1,"[Circular]"]`},
		{"shared not circular", `const s = {x: 1}; return [s, s]`, `[{"x":1},{"x":1}]`},
		{"map string keys", `return new Map([["a", 1], ["b", new Set([2])]])`, `{"a":1,"b":[2]}`},
		{"map other keys", `return new Map([[1, "one"], [{k: 2}, "obj"]])`, `[[1,"one"],[{"k":2},"obj"]]`},
		{"set", `return new Set([1, "x", 1])`, `[1,"x"]`},
		{"date", `return {d: new Date(Date.UTC(2024, 0, 2, 3, 4, 5))}`, `{"d":"2024-01-02T03:04:05.000Z"}`},
		{"invalid date", `return new Date("nope")`, `"Invalid Date"`},
		{"date subclass", `class D extends Date {}; return [new D(0)]`, `["1970-01-01T00:00:00.000Z"]`},
		{"map subclass", `class M extends Map {}; return new M([["a", 1]])`, `{"a":1}`},
		// An exotic object given Object.prototype (or null) as its prototype
		// is taken as an ordinary object: no brand check runs (sanitize.js).
		{"re-prototyped date", `const d = new Date(0); Object.setPrototypeOf(d, Object.prototype); d.k = 1; return [d]`, `[{"k":1}]`},
		{"regexp", `return /x+/g`, `"/x+/g"`},
		{"typed array", `return new Int16Array([1, -2])`, `[1,-2]`},
		{"bigint typed array", `return new BigInt64Array([5n])`, `["5"]`},
		{"array buffer", `return [new ArrayBuffer(4), new DataView(new ArrayBuffer(2))]`, `["[ArrayBuffer: 4 bytes]","[DataView: 2 bytes]"]`},
		{"promise in object", `return {p: Promise.resolve(1)}`, `{"p":"[Promise]"}`},
		{"weak", `return [new WeakMap(), new WeakSet()]`, `["[WeakMap]","[WeakSet]"]`},
		{"boxed", `return [new String("s"), new Number(2), new Boolean(true), Object(3n)]`, `["s",2,true,"3"]`},
		{"toJSON", `return {v: {toJSON() { return {replaced: true} }}}`, `{"v":{"replaced":true}}`},
		{"toJSON throws", `return {v: {toJSON() { throw new Error("tj") }}}`, `{"v":"[toJSON threw: Error: tj]"}`},
		{"throwing getter", `return {ok: 1, get bad() { throw new RangeError("no") }}`, `{"bad":"[Getter threw: RangeError: no]","ok":1}`},
		{"throwing getter in array", `const a = [1]; Object.defineProperty(a, 1, {get() { throw "x" }, enumerable: true}); return a`, `[1,"[Getter threw: x]"]`},
		{"getter value", `return {get g() { return 7 }}`, `{"g":7}`},
		{"class instance", `class P { constructor() { this.x = 1 } get y() { return 2 } }; return new P()`, `{"x":1}`},
		{"symbol keys dropped", `return {[Symbol("k")]: 1, a: 2}`, `{"a":2}`},
		{"null prototype", `return Object.assign(Object.create(null), {a: 1})`, `{"a":1}`},
		{"__proto__ key", `return JSON.parse('{"__proto__": {"x": 1}}')`, `{"__proto__":{"x":1}}`},
		{"proxy ownKeys throws", `return {p: new Proxy({}, {ownKeys() { throw new Error("trap") }})}`, `{"p":"[Unserializable: Error: trap]"}`},
		{"proxy get throws", `return {p: new Proxy({a: 1}, {get() { throw new Error("get trap") }})}`, `{"p":"[Getter threw: Error: get trap]"}`},
		{"revoked proxy", `const p = Proxy.revocable({}, {}); p.revoke(); return [p.proxy]`,
			`["[Unserializable: TypeError: Cannot perform 'IsArray' on a proxy that has been revoked]"]`},
		{"endless proxy", `const h = {get: (t, k) => k === "toJSON" ? undefined : new Proxy({}, h), ownKeys: () => ["x"], getOwnPropertyDescriptor: () => ({value: 1, enumerable: true, configurable: true})}; return new Proxy({}, h)`, ``},
		{"hostile prototype setters", `Object.defineProperty(Object.prototype, "a", {set() { throw new Error("setter") }}); Object.defineProperty(Array.prototype, "0", {set() { throw new Error("index") }}); return {a: [1]}`, `{"a":[1]}`},
	}
	for _, c := range cases {
		out := r.Run(context.Background(), Input{Code: c.code})
		if !out.OK {
			t.Errorf("%s: %+v", c.name, out.Error)
			continue
		}
		got := compact(t, string(out.Result))
		if c.name == "endless proxy" {
			if !strings.Contains(got, `"[MaxDepth]"`) {
				t.Errorf("%s: %s, want [MaxDepth]", c.name, got)
			}
			continue
		}
		if got != c.want {
			t.Errorf("%s:\n got %s\nwant %s", c.name, got, c.want)
		}
	}
}

func TestSanitize_Error(t *testing.T) {
	out := run(t, `const e = new TypeError("bad", {cause: "why"}); return {e}`)
	if !out.OK {
		t.Fatal(out.Error)
	}
	var v struct {
		E struct{ Name, Message, Stack, Cause string }
	}
	if err := json.Unmarshal(out.Result, &v); err != nil {
		t.Fatal(err)
	}
	if v.E.Name != "TypeError" || v.E.Message != "bad" || v.E.Cause != "why" ||
		!strings.HasPrefix(v.E.Stack, "TypeError: bad\n    at ") || strings.Contains(v.E.Stack, "isogate:") {
		t.Fatalf("error = %+v", v.E)
	}
}

func TestSanitize_MaxDepth(t *testing.T) {
	// nest(n) is n objects nested in one another around a leaf.
	r := newRunner(t, config.RunCodeConfig{})
	depth := func(code string) (int, any) {
		t.Helper()
		var v any
		if err := json.Unmarshal([]byte(mustOK(t, r, Input{Code: code})), &v); err != nil {
			t.Fatal(err)
		}
		n := 0
		for {
			m, ok := v.(map[string]any)
			if !ok {
				return n, v
			}
			v = m["a"]
			n++
		}
	}
	const nest = `const nest = (n) => { let o = "leaf"; for (let i = 0; i < n; i++) o = {a: o}; return o };`
	// Issue 25 (10): the description promises "nesting deeper than 10
	// levels → [MaxDepth]"; 20 levels came back in full.
	if MaxDepth != 10 || !strings.Contains(r.Description(), "deeper than 10 levels") {
		t.Fatalf("MaxDepth %d; description: %s", MaxDepth, r.Description())
	}
	if n, leaf := depth(nest + `return nest(10)`); n != 10 || leaf != "leaf" {
		t.Fatalf("10 levels: %d objects, leaf %v; want all of them", n, leaf)
	}
	if n, leaf := depth(nest + `return nest(11)`); n != 10 || leaf != "[MaxDepth]" {
		t.Fatalf("11 levels: %d objects, then %v; want 10 then [MaxDepth]", n, leaf)
	}
	if n, leaf := depth(nest + `return nest(5000)`); n != 10 || leaf != "[MaxDepth]" {
		t.Fatalf("5000 levels: %d objects, then %v", n, leaf)
	}
}
