package codemode

import (
	"reflect"
	"strings"
	"testing"

	"github.com/isogate/isogate/internal/jsvalue/jsvaluetest"
)

// TestTamperedBuiltins runs the same program twice, once with a line that
// overwrites the built-ins (jsvaluetest.Tamper) and once with an empty line
// instead: the result, the console lines, the tool call's arguments (echoed
// back) and the error must not change. The console renders objects as
// JSON.stringify does, toJSON included, so the program logs no Date.
func TestTamperedBuiltins(t *testing.T) {
	f := newFixture(t, Options{})
	const values = `function named() {}
const cyc = {name: "c"}; cyc.self = cyc;
const err = new TypeError("bad", {cause: "why"}), trap = new Error("trap");
const value = {n: 1.5, nan: NaN, u: undefined, s: "x".repeat(5000), big: 12345678901234567890n,
  m: new Map([["k", new Set([1, 2])]]), m2: new Map([[1, "one"]]), d: new Date(0), bad: new Date(NaN), re: /x+/g,
  ta: new Int8Array([1, -1]), buf: new ArrayBuffer(4), boxed: [new String("s"), new Number(2), Object(3n)],
  e: err, f: named, cls: class K {}, cyc, arr: [1, [2, [3]]], nul: Object.assign(Object.create(null), {a: 1}),
  get thrower() { throw new RangeError("no") }, px: new Proxy({}, {ownKeys() { throw trap }}),
  json: {toJSON() { return {replaced: true} }}};
const args = {msg: "hi", n: 10, nested: {a: [1, 2], s: "it's"}};
`
	for _, c := range []struct{ name, before, after string }{
		{"result, console and tool call", values, `console.log("a", 1, {b: [2], big: 10n, f: named}, cyc, [1, 2], named, 10n);
console.warn(err); console.error("e", err); console.info(value.s); console.debug(null, undefined, true);
const echoed = await my_backend.echo(args);
return {value, echoed}`},
		{"thrown error", `const e = new RangeError("thrown");`, `console.log(e); throw e`},
		{"thrown value", `const v = {why: new Map([["k", 1]])};`, `throw v`},
	} {
		t.Run(c.name, func(t *testing.T) {
			clean := f.exec(t, c.before+"\n\n"+c.after)
			tampered := f.exec(t, c.before+"\n"+jsvaluetest.Tamper+"\n"+c.after)
			if c.name == "result, console and tool call" && (clean.IsError || len(clean.Console) != 5 || !strings.Contains(clean.Text, `"echoed"`)) {
				t.Fatalf("clean run: error %v, console %q", clean.IsError, clean.Console)
			}
			for _, field := range []struct {
				name      string
				want, got any
			}{
				{"is error", clean.IsError, tampered.IsError},
				{"code", clean.Code, tampered.Code},
				{"text", clean.Text, tampered.Text},
				{"value", string(clean.Value), string(tampered.Value)},
				{"console", clean.Console, tampered.Console},
				{"tool calls", clean.ToolCalls, tampered.ToolCalls},
			} {
				if !reflect.DeepEqual(field.want, field.got) {
					t.Errorf("tampering changed the %s:\n  clean    %v\n  tampered %v", field.name, field.want, field.got)
				}
			}
			if strings.Contains(tampered.Text+strings.Join(tampered.Console, "\n"), "forged") {
				t.Errorf("output mentions the tampering")
			}
		})
	}
}
