package fastpath

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"testing"
)

// call is shorthand for an expected KindSimpleCall plan.
func call(backend, tool, args string) Plan {
	return Plan{Kind: KindSimpleCall, Backend: backend, Tool: tool, Name: backend + "." + tool, Arguments: json.RawMessage(args)}
}

// bracket is shorthand for an expected KindSimpleCall plan written b["t"](...).
func bracket(backend, tool, args string) Plan {
	p := call(backend, tool, args)
	p.Bracket = true
	return p
}

// direct is shorthand for an expected KindDirect plan.
func direct(backend, tool, args string) Plan {
	return Plan{Kind: KindDirect, Backend: backend, Tool: tool, Name: backend + "." + tool, Arguments: json.RawMessage(args)}
}

var interfaces = Plan{Kind: KindInterfaces}

func toolIface(name string) Plan { return Plan{Kind: KindToolInterface, InterfaceName: name} }

type positive struct {
	name string
	code string
	want Plan
}

var positives = []positive{
	// Declaration form.
	{"const semicolons", `const r = await github.search_issues({query: "bug", limit: 10}); return r;`,
		call("github", "search_issues", `{"query":"bug","limit":10}`)},
	{"const no semicolons", "const r = await github.search_issues({query: \"bug\"})\nreturn r",
		call("github", "search_issues", `{"query":"bug"}`)},
	{"let", `let r = await b.t({}); return r`, call("b", "t", `{}`)},
	{"var", "var result = await b.t({a: 1})\nreturn result;", call("b", "t", `{"a":1}`)},
	{"const tight", `const r=await b.t({a:1});return r`, call("b", "t", `{"a":1}`)},
	{"semicolon before return on next line", "const r = await b.t({})\n;return r", call("b", "t", `{}`)},
	{"CRLF", "const r = await b.t({})\r\nreturn r\r\n", call("b", "t", `{}`)},
	{"U+2028 line terminator", "const r = await b.t({})\u2028return r", call("b", "t", `{}`)},
	{"newline inside block comment", "const r = await b.t({}) /* a\nb */ return r", call("b", "t", `{}`)},
	{"line comment before return", "const r = await b.t({}) // x\nreturn r", call("b", "t", `{}`)},
	{"every token on its own line", "const\nr\n=\nawait\nb\n.\nt\n(\n{\n}\n)\nreturn r", call("b", "t", `{}`)},
	{"no argument", "const r = await b.t()\nreturn r;", call("b", "t", `{}`)},
	{"bracket declaration", `const out = await calc["get-sum"]({a: 1, b: 2}); return out;`,
		bracket("calc", "get-sum", `{"a":1,"b":2}`)},
	{"binding named like a global", `const __interfaces = await b.t({}); return __interfaces`, call("b", "t", `{}`)},
	{"multi-line agent style", `
// Find open bugs.
const issues = await github.search_issues({
  query: 'is:open label:bug',
  per_page: 5,
  sort: "created",
});
return issues;
`, call("github", "search_issues", `{"query":"is:open label:bug","per_page":5,"sort":"created"}`)},

	// return / await / bare.
	{"return await", `return await b.t({a: 1})`, call("b", "t", `{"a":1}`)},
	{"return await semicolon", `return await b.t({a: 1});`, call("b", "t", `{"a":1}`)},
	{"return", `return b.t({a: 1});`, call("b", "t", `{"a":1}`)},
	{"return no semicolon", `return b.t({a: 1})`, call("b", "t", `{"a":1}`)},
	{"await", `await b.t({a: 1})`, call("b", "t", `{"a":1}`)},
	{"await semicolon", `await b.t({a: 1});`, call("b", "t", `{"a":1}`)},
	{"await newline", "await\nb.t({a: 1})", call("b", "t", `{"a":1}`)},
	{"return await newline after await", "return await\nb.t({})", call("b", "t", `{}`)},
	{"bare", `b.t({a: 1})`, call("b", "t", `{"a":1}`)},
	{"bare semicolon", `b.t({a: 1});`, call("b", "t", `{"a":1}`)},
	{"bare no argument", `b.t()`, call("b", "t", `{}`)},
	{"await no argument", `await b.t();`, call("b", "t", `{}`)},
	{"return no argument", `return b.t()`, call("b", "t", `{}`)},
	{"empty object", `b.t({})`, call("b", "t", `{}`)},
	{"empty object with comment", `b.t({ /* nothing */ })`, call("b", "t", `{}`)},
	{"spaces everywhere", " \t\n return   await   b . t ( { a : 1 } ) ; \n\n", call("b", "t", `{"a":1}`)},
	{"unicode whitespace", "\u00a0\ufeffreturn\u3000b.t({a:\u20001})\u00a0", call("b", "t", `{"a":1}`)},
	{"vertical tab and form feed", "\v\fb.t({})\v", call("b", "t", `{}`)},
	{"identifier chars", `$b._t2({})`, call("$b", "_t2", `{}`)},
	{"underscore backend", `__b.t({})`, call("__b", "t", `{}`)},
	{"digits in names", `b2.t3({})`, call("b2", "t3", `{}`)},
	{"reserved word as tool", `await b.delete({id: 1})`, call("b", "delete", `{"id":1}`)},
	{"contextual keyword backend", `async.of({})`, call("async", "of", `{}`)},
	{"bracket double", `b["get-sum"]({a: 1, b: 2})`, bracket("b", "get-sum", `{"a":1,"b":2}`)},
	{"bracket single", `return await b['x.y z']({})`, bracket("b", "x.y z", `{}`)},
	{"bracket spaced", `return await b [ "x" ] ( { } ) ;`, bracket("b", "x", `{}`)},
	{"bracket escaped", `b["a\"b\u0041"]()`, bracket("b", `a"bA`, `{}`)},
	{"bracket plain identifier", `b["t"]({})`, bracket("b", "t", `{}`)},

	// Comments.
	{"comments everywhere", "// fetch\n/* multi\nline */ const r = await b.t({ /* inline */ a: 1, // trailing\n }); // done\n return r; /* end */",
		call("b", "t", `{"a":1}`)},
	{"trailing line comment", `return await b.t({}) // comment`, call("b", "t", `{}`)},
	{"comment between tokens", `b/**/./**/t/**/(/**/{/**/a/**/:/**/1/**/}/**/)/**/;/**/`, call("b", "t", `{"a":1}`)},
	{"comment with slashes", "/* // */ b.t({}) // /* ", call("b", "t", `{}`)},
	{"comment markers in strings", `b.t({a: "/* not a comment */", b: '// nor this'})`,
		call("b", "t", `{"a":"/* not a comment */","b":"// nor this"}`)},

	// Literals.
	{"nested", `b.t({a: {b: [1, {c: null}], d: []}, e: [[], [[]]], f: true, g: false})`,
		call("b", "t", `{"a":{"b":[1,{"c":null}],"d":[]},"e":[[],[[]]],"f":true,"g":false}`)},
	{"trailing commas", `b.t({a: [1, 2, 3,], b: {c: 1,},})`, call("b", "t", `{"a":[1,2,3],"b":{"c":1}}`)},
	{"JSON argument", `b.t({"a": [1, "x", null], "b": {"c": true}})`, call("b", "t", `{"a":[1,"x",null],"b":{"c":true}}`)},
	{"single-quoted escapes", `b.t({s: 'it\'s "quoted"\n\ttab \\ back'})`,
		call("b", "t", `{"s":"it's \"quoted\"\n\ttab \\ back"}`)},
	{"double-quoted escapes", `b.t({s: "say \"hi\" \u00e9 \u{1F600} \x41 \0 \/ \'"})`,
		call("b", "t", `{"s":"say \"hi\" é 😀 A \u0000 / '"}`)},
	{"control escapes", `b.t({c: "\b\f\v\r"})`, call("b", "t", `{"c":"\b\f\u000b\r"}`)},
	{"raw control and specials kept", "b.t({c: \"\x01\x7f\u2028<>&\t\"})", call("b", "t", "{\"c\":\"\\u0001\x7f\u2028<>&\\t\"}")},
	{"raw unicode", `b.t({name: "héllo 世界 😀"})`, call("b", "t", `{"name":"héllo 世界 😀"}`)},
	{"surrogate pair escapes", `b.t({e: "\uD83D\uDE00", f: "\ud83d\u{de00}"})`, call("b", "t", `{"e":"😀","f":"😀"}`)},
	{"code point escapes", `b.t({e: "\u{41}\u{0000000042}\u{10FFFF}"})`, call("b", "t", "{\"e\":\"AB\U0010FFFF\"}")},
	{"empty strings", `b.t({"": '', e: ""})`, call("b", "t", `{"":"","e":""}`)},
	{"escaped key", `b.t({"a\nb": 1, 'c"d': 2})`, call("b", "t", `{"a\nb":1,"c\"d":2}`)},
	{"numbers", `b.t({a: 0, b: -1, c: 1.5, d: -0.25, e: 1e3, f: 2.5E-3, g: 0x1F, h: .5, i: 5., j: 1e21, k: 1e-7, l: 123456789012345680000, m: -0, n: 0o17, o: 0b101, p: 0XFF, q: 1.0, r: 100})`,
		call("b", "t", `{"a":0,"b":-1,"c":1.5,"d":-0.25,"e":1000,"f":0.0025,"g":31,"h":0.5,"i":5,"j":1e+21,"k":1e-7,"l":123456789012345680000,"m":0,"n":15,"o":5,"p":255,"q":1,"r":100}`)},
	{"number edges", `b.t({big: 9007199254740993, tiny: 1e-400, min: 5e-324, max: 1.7976931348623157e308, x: 0.000001, y: -1e-7, z: 1.5e-7, w: 123e18, v: 1234567e15, hex: 0xFFFFFFFFFFFFFFFFF, pi: 3.14159})`,
		call("b", "t", `{"big":9007199254740992,"tiny":0,"min":5e-324,"max":1.7976931348623157e+308,"x":0.000001,"y":-1e-7,"z":1.5e-7,"w":123000000000000000000,"v":1.234567e+21,"hex":295147905179352830000,"pi":3.14159}`)},
	{"negative with space and comment", `b.t({a: - /* c */ 1, b: -0x10, c: [-1.5e+3]})`, call("b", "t", `{"a":-1,"b":-16,"c":[-1500]}`)},
	{"identifier keys", `b.t({"quoted": 1, 'single': 2, $dollar: 3, _under: 4, camelCase5: 5, if: 6, null: 7, true: 8})`,
		call("b", "t", `{"quoted":1,"single":2,"$dollar":3,"_under":4,"camelCase5":5,"if":6,"null":7,"true":8}`)},
	{"numeric keys", `b.t({1: "a", 0x10: "b", 1.5: "c", .5: "d", 1e21: "e", 4294967294: "f", 4294967295: "g"})`,
		call("b", "t", `{"1":"a","16":"b","4294967294":"f","1.5":"c","0.5":"d","1e+21":"e","4294967295":"g"}`)},
	{"integer keys first like JS", `b.t({b: 1, 2: 2, a: 3, 1: 4, "10": 5, "01": 6})`,
		call("b", "t", `{"1":4,"2":2,"10":5,"b":1,"a":3,"01":6}`)},
	{"duplicate keys last wins", `b.t({a: 1, b: 2, a: 3})`, call("b", "t", `{"a":3,"b":2}`)},
	{"duplicate keys many", `b.t({k0:0,k1:1,k2:2,k3:3,k4:4,k5:5,k6:6,k7:7,k8:8,k9:9,k3:"x",k10:10,k0:{}})`,
		call("b", "t", `{"k0":{},"k1":1,"k2":2,"k3":"x","k4":4,"k5":5,"k6":6,"k7":7,"k8":8,"k9":9,"k10":10}`)},
	{"duplicate across quoting", `b.t({a: 1, "a": 2, 'a': 3})`, call("b", "t", `{"a":3}`)},
	{"duplicate numeric key", `b.t({1: 1, "1": 2, 1.0: 3})`, call("b", "t", `{"1":3}`)},
	{"proto as nested value", `b.t({a: "__proto__", b: {c: "__proto__"}})`, call("b", "t", `{"a":"__proto__","b":{"c":"__proto__"}}`)},
	{"deep nesting", "b.t({a:" + strings.Repeat("[", 100) + strings.Repeat("]", 100) + "})",
		call("b", "t", `{"a":`+strings.Repeat("[", 100)+strings.Repeat("]", 100)+`}`)},

	// Introspection.
	{"return __interfaces", `return __interfaces`, interfaces},
	{"return __interfaces;", `return __interfaces;`, interfaces},
	{"__interfaces", `__interfaces`, interfaces},
	{"__interfaces;", "  __interfaces ; // all\n", interfaces},
	{"tool interface", `return __getToolInterface("github.search_issues")`, toolIface("github.search_issues")},
	{"tool interface single", `__getToolInterface('x')`, toolIface("x")},
	{"tool interface await", `await __getToolInterface("x");`, toolIface("x")},
	{"tool interface return await", "return await __getToolInterface( 'a\\'b' ) ;\n", toolIface("a'b")},
	{"tool interface semicolon", `__getToolInterface("x");`, toolIface("x")},

	// Direct JSON.
	{"direct", `{"tool": "github.search_issues", "arguments": {"query": "bug", "n": [1, 2]}}`,
		direct("github", "search_issues", `{"query":"bug","n":[1,2]}`)},
	{"direct no arguments", `{"tool":"b.t"}`, direct("b", "t", `{}`)},
	{"direct reversed", ` {"arguments": {}, "tool": "b.t"} `, direct("b", "t", `{}`)},
	{"direct whitespace", "\n\t {\n  \"tool\": \"b.t\",\n  \"arguments\": {\"a\": 1}\n}\n", direct("b", "t", `{"a":1}`)},
	{"direct many dots", `{"tool": "a.b.c"}`, direct("a", "b.c", `{}`)},
	{"direct hyphen", `{"tool": "my-server.get-sum", "arguments": {"a": 1}}`, direct("my-server", "get-sum", `{"a":1}`)},
	{"direct escaped tool", `{"tool": "b.\u0074"}`, direct("b", "t", `{}`)},
	{"direct dup argument keys", `{"tool": "b.t", "arguments": {"a": 1, "b": 2, "a": 3}}`, direct("b", "t", `{"a":3,"b":2}`)},
	{"direct proto key", `{"tool": "b.t", "arguments": {"__proto__": 1}}`, direct("b", "t", `{"__proto__":1}`)},
	{"direct numbers", `{"tool": "b.t", "arguments": {"n": 1.0, "m": 1E2, "z": -0, "s": "\u00e9\/"}}`,
		direct("b", "t", `{"n":1,"m":100,"z":0,"s":"é/"}`)},
}

func TestClassifyPositive(t *testing.T) {
	seen := map[string]bool{}
	for _, tc := range positives {
		if seen[tc.name] {
			t.Fatalf("duplicate test name %q", tc.name)
		}
		seen[tc.name] = true
		t.Run(tc.name, func(t *testing.T) {
			checkPlan(t, tc.code, tc.want)
		})
	}
}

func checkPlan(t *testing.T, code string, want Plan) {
	t.Helper()
	got := Classify(code)
	if got.Kind != want.Kind || got.Backend != want.Backend || got.Tool != want.Tool ||
		got.Name != want.Name || got.InterfaceName != want.InterfaceName ||
		got.Bracket != want.Bracket || !bytes.Equal(got.Arguments, want.Arguments) {
		t.Errorf("Classify(%q)\n got %s\nwant %s", code, fmtPlan(got), fmtPlan(want))
	}
}

func fmtPlan(p Plan) string {
	var b strings.Builder
	b.WriteString(p.Kind.String())
	if p.Backend != "" || p.Tool != "" || p.Name != "" {
		b.WriteString(" backend=" + p.Backend + " tool=" + p.Tool + " name=" + p.Name)
	}
	if p.Bracket {
		b.WriteString(" bracket")
	}
	if p.InterfaceName != "" {
		b.WriteString(" iface=" + p.InterfaceName)
	}
	if p.Arguments != nil {
		b.WriteString(" args=" + string(p.Arguments))
	}
	return b.String()
}

var negatives = []string{
	// From the brief.
	`const r = await b.t({}); return x;`,
	`b.t({a: x})`,
	`b.t({...o})`,
	`b.t({a: 1}).then(f)`,
	`await b.t({a:1}); await c.d({})`,
	"b.t({a: `x`})",
	`b.t(1+2)`,
	`b.t({[k]: 1})`,
	`b.t({a: undefined})`,
	`b.t({a:1}, {b:2})`,
	`x = b.t({})`,
	`return`,
	``,

	// Empty-ish.
	" \n\t ",
	`;`,
	`// just a comment`,
	`/* just a comment */`,
	`return;`,

	// Result not returned as is.
	`(await b.t({})).x`,
	`return (await b.t({})).x`,
	`(b.t({}))`,
	`return (b.t({}))`,
	`return await (b.t({}))`,
	`b.t({}).x`,
	`b.t({})[0]`,
	`b.t({})()`,
	"b.t({})`x`",
	`b.t({}) || x`,
	`b.t({}), 1`,
	`!b.t({})`,
	`void b.t({})`,
	`typeof b.t({})`,
	`new b.t({})`,
	`await await b.t({})`,
	`return return b.t({})`,
	`return await await b.t({})`,
	`await return b.t({})`,
	`b.t?.({})`,
	`b?.t({})`,
	`b.t.u({})`,
	`b.t.call(null, {})`,
	`b({})`,
	`b.t`,
	`return b.t`,
	`b.t(`,
	`b.t({}`,
	`b.t({})}`,
	`b.t({}))`,
	`{ b.t({}) }`,
	`{ return b.t({}) }`,
	`async () => b.t({})`,
	`(async () => b.t({}))()`,

	// Automatic semicolon insertion after return.
	"return\nb.t({})",
	"return\nawait b.t({})",
	"return // c\nb.t({})",
	"return /* \n */ b.t({})",
	"return\u2028b.t({})",
	"return\n__interfaces",
	"return\n__getToolInterface('x')",
	"const r = await b.t({});\nreturn\nr",

	// Declaration form.
	`const r = b.t({}); return r`,
	`const r = await b.t({})`,
	`const r = await b.t({});`,
	`const r = await b.t({}) return r`,
	`const r = await b.t({}) /* no newline */ return r`,
	`const r = await b.t({}); return r; return r`,
	`const r = await b.t({}); return await r`,
	`const r = await b.t({}); return r.x`,
	`const r = await b.t({}); return (r)`,
	`const r = await b.t({}); return r, r`,
	`const r = await b.t({}), s = 1; return r`,
	`const r = await b.t({}); const s = 1; return r`,
	`const {r} = await b.t({}); return r`,
	`const [r] = await b.t({}); return [r]`,
	`const r: any = await b.t({}); return r`,
	`const r = await b.t({}) as any; return r`,
	`const b = await b.t({}); return b`,
	`let let = await b.t({}); return let`,
	`const await = await b.t({}); return await`,
	`var eval = await b.t({}); return eval`,
	`const r = await b.t({});; return r`,
	`const r == await b.t({}); return r`,
	`r = await b.t({}); return r`,
	`const r = await b.t({}); return`,
	`const r = await b.t({}); r`,
	`const r = await b.t({}); return r;;`,
	`const = await b.t({}); return`,
	`const r = await; return r`,
	`const r = await b.t({}); return r x`,

	// Statements around the call.
	`b.t({});;`,
	`;b.t({})`,
	`b.t({}) b.t({})`,
	"b.t({})\nb.t({})",
	"b.t({})\n(1)",
	`b.t({}); return 1`,
	`if (x) b.t({})`,
	`"use strict"; b.t({})`,

	// Callee.
	`b[t]({})`,
	`b[""]({})`,
	`b[0]({})`,
	`b["a" + "b"]({})`,
	"b[`x`]({})",
	`b["x"]["y"]({})`,
	`b.["x"]({})`,
	`b..t({})`,
	`b.1({})`,
	`b.5({})`,
	`1.t({})`,
	`"b".t({})`,
	`this.t({})`,
	`await.t({})`,
	`const.t({})`,
	`eval.t({})`,
	`true.t({})`,
	`null.t({})`,
	`__interfaces.t({})`,
	`__getToolInterface.t({})`,
	`b\u0061.t({})`,
	`b.\u0074({})`,
	`bé.t({})`,
	`é.t({})`,
	`b.té({})`,
	`#b.t({})`,
	"#!/usr/bin/env node\nb.t({})",
	"<!-- x\nb.t({})",
	"b.t({})\n--> x",
	`b.t({})++`,
	`b.t ({}) = 1`,

	// Arguments that are not a single object literal.
	`b.t([1, 2])`,
	`b.t("x")`,
	`b.t(null)`,
	`b.t(1)`,
	`b.t(true)`,
	`b.t(-1)`,
	`b.t({a: 1},)`,
	`b.t(,)`,
	`b.t(())`,
	`b.t(({}))`,
	`b.t(o)`,
	`b.t(...a)`,
	`b.t({}, )`,
	`b.t(undefined)`,

	// Values.
	`b.t({a: NaN})`,
	`b.t({a: Infinity})`,
	`b.t({a: -Infinity})`,
	`b.t({a: +1})`,
	`b.t({a: 1n})`,
	`b.t({a: 1_000})`,
	`b.t({a: 017})`,
	`b.t({a: 08})`,
	`b.t({a: 00})`,
	`b.t({a: 0x})`,
	`b.t({a: 0xG})`,
	`b.t({a: 0o8})`,
	`b.t({a: 0b2})`,
	`b.t({a: 1e})`,
	`b.t({a: 1e+})`,
	`b.t({a: 1a})`,
	`b.t({a: 1.2.3})`,
	`b.t({a: 1..5})`,
	`b.t({a: .})`,
	`b.t({a: 1e400})`,
	`b.t({a: -1e400})`,
	`b.t({a: 0x` + strings.Repeat("F", 300) + `})`,
	`b.t({a: --1})`,
	`b.t({a: - -1})`,
	`b.t({a: -"1"})`,
	`b.t({a: -true})`,
	`b.t({a: 1 - 1})`,
	`b.t({a: 1 + 2})`,
	`b.t({a: "x" + "y"})`,
	`b.t({a: (1)})`,
	`b.t({a: void 0})`,
	`b.t({a: typeof x})`,
	`b.t({a: /re/})`,
	`b.t({a: function(){}})`,
	`b.t({a: () => 1})`,
	`b.t({a: new Date()})`,
	`b.t({a: Date.now()})`,
	`b.t({a: b.c})`,
	`b.t({a: x.y})`,
	`b.t({a: [1,,2]})`,
	`b.t({a: [,]})`,
	`b.t({a: [,1]})`,
	`b.t({a: [...x]})`,
	`b.t({a: [1 2]})`,
	`b.t({a: [1,2})`,
	`b.t({a: {b: 1})`,
	`b.t({a: True})`,
	`b.t({a: nil})`,
	`b.t({a: True, b: None})`,

	// Object syntax.
	`b.t({,})`,
	`b.t({a:1,,})`,
	`b.t({a})`,
	`b.t({a, b})`,
	`b.t({a() {}})`,
	`b.t({get a() { return 1 }})`,
	`b.t({async a() {}})`,
	`b.t({a: 1 b: 2})`,
	`b.t({a 1})`,
	`b.t({a: })`,
	`b.t({: 1})`,
	`b.t({-1: 1})`,
	`b.t({[1]: 1})`,
	`b.t({"a": 1; "b": 2})`,
	`b.t({a = 1})`,
	`b.t({__proto__: {}})`,
	`b.t({"__proto__": 1})`,
	`b.t({'__proto__': null})`,
	`b.t({a: {__proto__: []}})`,
	`b.t({1n: 1})`,
	`b.t({é: 1})`,

	// Strings.
	`b.t({a: 'unterminated})`,
	`b.t({a: "unterminated})`,
	`b.t({a: "mixed'})`,
	"b.t({a: \"line\nbreak\"})",
	"b.t({a: \"line\rbreak\"})",
	"b.t({a: \"continued\\\nline\"})",
	`b.t({a: "\1"})`,
	`b.t({a: "\08"})`,
	`b.t({a: "\9"})`,
	`b.t({a: "\u12"})`,
	`b.t({a: "\u12G4"})`,
	`b.t({a: "\u{}"})`,
	`b.t({a: "\u{110000}"})`,
	`b.t({a: "\u{FFFFFFFFFFFF}"})`,
	`b.t({a: "\u{41"})`,
	`b.t({a: "\x4"})`,
	`b.t({a: "\xZZ"})`,
	`b.t({a: "\uD800"})`,
	`b.t({a: "\uDC00"})`,
	`b.t({a: "\uDE00\uD83D"})`,
	`b.t({a: "\uD83D x"})`,
	`b.t({a: "\uD83D\n"})`,
	`b.t({a: "\uD83D\uD83D"})`,
	`b.t({a: "\u{D800}"})`,
	`b.t({a: "\q"})`,
	`b.t({a: "\a"})`,
	`b.t({a: "trailing backslash\`,
	"b.t({a: \"\xff\"})",
	"b.t({a: \"\xed\xa0\x80\"})",

	// Introspection.
	`await __interfaces`,
	`return await __interfaces`,
	`__interfaces.x`,
	`__interfaces()`,
	`return __interfaces.foo`,
	`return __interfaces["x"]`,
	`return __interfaces;;`,
	`__interfaces __interfaces`,
	`__getToolInterface()`,
	`__getToolInterface("")`,
	`__getToolInterface(x)`,
	`__getToolInterface("a", "b")`,
	`__getToolInterface("a",)`,
	"__getToolInterface(`x`)",
	`__getToolInterface("a").x`,
	`__getToolInterface["x"]`,
	`__getToolInterface`,
	`return __getToolInterface`,
	`__getToolInterface("a" + "b")`,
	`__getToolInterface({})`,
	`__getToolInterface(1)`,
	`const r = await __getToolInterface("x"); return r`,
	`const r = __interfaces; return r`,

	// Broken input.
	`b.t({}) /*`,
	`/* b.t({})`,
	`b.t({}) /`,
	"b.t({})\x00",
	"\xff",
	"b.t({}) \u0085", // NEL is not JavaScript whitespace
	`b.t({}) \`,
	`'`,
	`"`,
	`}`,
	`{`,
	`[`,

	// Direct JSON.
	`{}`,
	`{"tool": "b.t", "arguments": {}, "extra": 1}`,
	`{"tool": "b.t", "args": {}}`,
	`{"arguments": {}}`,
	`{"tool": "b.t", "arguments": []}`,
	`{"tool": "b.t", "arguments": null}`,
	`{"tool": "b.t", "arguments": "{}"}`,
	`{"tool": "b.t", "arguments": 1}`,
	`{"tool": 1}`,
	`{"tool": null}`,
	`{"tool": ["b.t"]}`,
	`{"tool": "bt"}`,
	`{"tool": ".t"}`,
	`{"tool": "b."}`,
	`{"tool": ""}`,
	`{"tool": "."}`,
	`{"tool": "b.t", "tool": "c.d"}`,
	`{"tool": "b.t", "arguments": {}, "arguments": {}}`,
	`{'tool': 'b.t'}`,
	`{tool: "b.t"}`,
	`{"tool": "b.t",}`,
	`{"tool": "b.t"} // comment`,
	`{"tool": /* c */ "b.t"}`,
	`{"tool": "b.t"} {"tool": "b.t"}`,
	`{"tool": "b.t"}; b.t({})`,
	`{"tool": "b.t"} x`,
	`{"tool": "b.t", "arguments": {"a": 1e400}}`,
	`{"tool": "b.t", "arguments": {"a": "\ud800"}}`,
	`{"tool": "b.\ud800"}`,
	`{"tool": "b.t", "arguments": {"a": 0x10}}`,
	`{"tool": "b.t", "arguments": {"a": NaN}}`,
	"{\"tool\": \"b.t\",\u00a0\"arguments\": {}}",
	`{"tool": "b.t", "arguments": {"a": ` + strings.Repeat("[", maxDepth+1) + strings.Repeat("]", maxDepth+1) + `}}`,
	`{"tool": "b.t"`,
	`[{"tool": "b.t"}]`,
	`"b.t"`,
}

func TestClassifyNegative(t *testing.T) {
	seen := map[string]bool{}
	for _, code := range negatives {
		if seen[code] {
			t.Fatalf("duplicate negative %q", code)
		}
		seen[code] = true
		if got := Classify(code); got.Kind != KindNone || got.Arguments != nil || got.Backend != "" ||
			got.Tool != "" || got.Name != "" || got.InterfaceName != "" || got.Bracket {
			t.Errorf("Classify(%q) = %s, want None", code, fmtPlan(got))
		}
	}
}

// TestNegativesAreNearMisses checks that negatives fail for the intended
// reason: each one-character edit below turns a negative into a positive, so
// the negative is not rejected by accident (for example by a lexer gap).
func TestNegativesAreNearMisses(t *testing.T) {
	pairs := []struct{ bad, good string }{
		{`const r = await b.t({}); return x;`, `const r = await b.t({}); return r;`},
		{`b.t({a: x})`, `b.t({a: 1})`},
		{`b.t({a: 1n})`, `b.t({a: 1})`},
		{`b.t({a: +1})`, `b.t({a: -1})`},
		{`b.t({a: 017})`, `b.t({a: 0x17})`},
		{`b.t({a: "\1"})`, `b.t({a: "\0"})`},
		{`b.t({a: "\uD800"})`, `b.t({a: "\uE800"})`},
		{`b.t({a: [1,,2]})`, `b.t({a: [1,2,]})`},
		{`b.t({__proto__: {}})`, `b.t({__proto_: {}})`},
		{`b.t({a: 1},)`, `b.t({a: 1,})`},
		{"return\nb.t({})", "return b.t({})\n"},
		{`const r = await b.t({}) return r`, "const r = await b.t({})\nreturn r"},
		{`const b = await b.t({}); return b`, `const c = await b.t({}); return c`},
		{`await __interfaces`, `return __interfaces`},
		{`__getToolInterface("")`, `__getToolInterface("x")`},
		{`b[""]({})`, `b["x"]({})`},
		{`{"tool": "bt"}`, `{"tool": "b.t"}`},
		{`{"tool": "b.t", "arguments": []}`, `{"tool": "b.t", "arguments": {}}`},
		{"b.t({}) \u0085", "b.t({}) \u00a0"},
	}
	for _, p := range pairs {
		if k := Classify(p.bad).Kind; k != KindNone {
			t.Errorf("Classify(%q).Kind = %v, want None", p.bad, k)
		}
		if k := Classify(p.good).Kind; k == KindNone {
			t.Errorf("Classify(%q).Kind = None, want a fast path", p.good)
		}
	}
}

func TestSizeLimit(t *testing.T) {
	prefix, suffix := "b.t({a: '", "'})"
	fill := MaxCodeSize - len(prefix) - len(suffix)
	atLimit := prefix + strings.Repeat("x", fill) + suffix
	if len(atLimit) != MaxCodeSize {
		t.Fatalf("bad test setup: len %d", len(atLimit))
	}
	if got := Classify(atLimit); got.Kind != KindSimpleCall || len(got.Arguments) != fill+8 {
		t.Errorf("code of exactly MaxCodeSize bytes: got %v with %d bytes of arguments", got.Kind, len(got.Arguments))
	}
	if got := Classify(atLimit + " "); got.Kind != KindNone {
		t.Errorf("code of MaxCodeSize+1 bytes: got %v, want None", got.Kind)
	}
	direct := `{"tool":"b.t","arguments":{"a":"` + strings.Repeat("x", MaxCodeSize) + `"}}`
	if got := Classify(direct); got.Kind != KindNone {
		t.Errorf("oversized direct JSON: got %v, want None", got.Kind)
	}
}

func TestDepthLimit(t *testing.T) {
	nest := func(n int) string {
		return "b.t({a: " + strings.Repeat("[", n) + strings.Repeat("]", n) + "})"
	}
	// The object argument itself is one level.
	if got := Classify(nest(maxDepth - 1)); got.Kind != KindSimpleCall {
		t.Errorf("nesting at the limit: got %v, want SimpleCall", got.Kind)
	}
	if got := Classify(nest(maxDepth)); got.Kind != KindNone {
		t.Errorf("nesting over the limit: got %v, want None", got.Kind)
	}
}

// TestPathological runs inputs of the maximum size that would be slow with
// a backtracking or quadratic implementation. Each must classify quickly;
// the test's running time is the check.
func TestPathological(t *testing.T) {
	n := MaxCodeSize - 16
	inputs := []string{
		"b.t(" + strings.Repeat("[", n),
		"b.t({a:" + strings.Repeat("{a:", n/3),
		"b.t({a: '" + strings.Repeat(`\u{0`, n/4),
		"b.t({a: '" + strings.Repeat(`\uD83D\uDE00`, n/12) + "'})",
		"b.t({" + strings.Repeat("a:1,", n/4) + "})",
		"b.t({a: " + strings.Repeat("9", n) + "})",
		"b.t({a: 0x" + strings.Repeat("f", n) + "})",
		"b.t({a: 0b" + strings.Repeat("1", n) + "})",
		"b.t({a: 0." + strings.Repeat("0", n) + "1})",
		strings.Repeat("/*", n/2),
		strings.Repeat("/**/", n/4) + "b.t()",
		strings.Repeat("//\n", n/3) + "b.t()",
		"b.t(" + strings.Repeat(`"`, n) + ")",
		`{"tool":"b.t","arguments":{"a":` + strings.Repeat("[", n/2) + `}}`,
		strings.Repeat(" ", n) + "b.t()",
		strings.Repeat("\u3000", n/3) + "b.t()",
	}
	for _, in := range inputs {
		Classify(in)
	}
	// Many distinct keys exercise the duplicate-key index.
	var b strings.Builder
	b.WriteString("b.t({")
	for i := 0; b.Len() < n; i++ {
		b.WriteString("k")
		b.WriteString(strings.Repeat("x", i%7))
		b.WriteString(strconv.Itoa(i))
		b.WriteString(":1,")
	}
	b.WriteString("})")
	if got := Classify(b.String()); got.Kind != KindSimpleCall {
		t.Errorf("many keys: got %v", got.Kind)
	}
}

func TestFormatNumber(t *testing.T) {
	cases := map[float64]string{
		0: "0", 1: "1", -1: "-1", 0.1: "0.1", 1.5: "1.5", 100: "100",
		1e20: "100000000000000000000", 1e21: "1e+21", 1.5e21: "1.5e+21", 123e-20: "1.23e-18",
		1e-6: "0.000001", 1e-7: "1e-7", 1.25e-7: "1.25e-7", 0.30000000000000004: "0.30000000000000004",
		5e-324: "5e-324", 1.7976931348623157e308: "1.7976931348623157e+308",
		9007199254740993: "9007199254740992", 4294967295: "4294967295", -123.456: "-123.456",
	}
	for f, want := range cases {
		if got := formatNumber(f); got != want {
			t.Errorf("formatNumber(%v) = %q, want %q", f, got, want)
		}
	}
}

func TestKindString(t *testing.T) {
	for k, want := range map[Kind]string{
		KindNone: "None", KindDirect: "Direct", KindSimpleCall: "SimpleCall",
		KindInterfaces: "Interfaces", KindToolInterface: "ToolInterface", Kind(9): "Kind(9)", Kind(-1): "Kind(-1)",
	} {
		if got := k.String(); got != want {
			t.Errorf("Kind(%d).String() = %q, want %q", int(k), got, want)
		}
	}
}

func BenchmarkClassifySimpleCall(b *testing.B) {
	code := `
// Find open bugs.
const issues = await github.search_issues({
  query: 'is:open label:bug',
  per_page: 5,
  sort: "created",
  labels: ["bug", "p1"],
});
return issues;
`
	b.ReportAllocs()
	b.SetBytes(int64(len(code)))
	for b.Loop() {
		if Classify(code).Kind != KindSimpleCall {
			b.Fatal("not a simple call")
		}
	}
}

func BenchmarkClassifyNone(b *testing.B) {
	code := `
const issues = await github.search_issues({query: 'is:open label:bug'});
return issues.filter(i => i.comments > 3).map(i => i.title);
`
	b.ReportAllocs()
	for b.Loop() {
		if Classify(code).Kind != KindNone {
			b.Fatal("classified")
		}
	}
}

func BenchmarkClassifyLarge(b *testing.B) {
	var sb strings.Builder
	sb.WriteString("b.t({items: [")
	for sb.Len() < MaxCodeSize-64 {
		sb.WriteString(`{id: 12345, name: 'item', tags: ["a", "b"], ok: true},`)
	}
	sb.WriteString("]})")
	code := sb.String()
	b.SetBytes(int64(len(code)))
	b.ReportAllocs()
	for b.Loop() {
		if Classify(code).Kind != KindSimpleCall {
			b.Fatal("not a simple call")
		}
	}
}

func TestReturnsReportsWhetherTheValueIsReturned(t *testing.T) {
	for code, want := range map[string]bool{
		`{"tool":"b.t"}`:                    true,
		`return await b.t({})`:              true,
		`return b.t({})`:                    true,
		"const r = await b.t({})\nreturn r": true,
		`await b.t({})`:                     false,
		`b.t({a: 1});`:                      false,
		`return __interfaces`:               true,
		`__interfaces`:                      false,
		`__getToolInterface("x")`:           false,
		`return __getToolInterface("x")`:    true,
		`/* return */ await b.t({})`:        false,
	} {
		p := Classify(code)
		if p.Kind == KindNone {
			t.Fatalf("%q not classified", code)
		}
		if p.Returns != want {
			t.Errorf("%q: Returns = %v, want %v", code, p.Returns, want)
		}
	}
}
