package runcode

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/isogate/isogate/config"
	"github.com/isogate/isogate/internal/jsvalue/jsvaluetest"
)

// tamperValues builds, on lines of their own, values that take every path of
// the console's inspect and of the result sanitizer.
const tamperValues = `function named() {}
const cyc = {name: "c"}; cyc.self = cyc;
const err = new TypeError("bad", {cause: "why"}), w = Symbol("w"), trap = new Error("trap");
const value = {n: 1.5, neg: -0, nan: NaN, u: undefined, s: "it's\n" + "x".repeat(20000), big: 12345678901234567890n,
  m: new Map([["k", new Set([1, 2])]]), m2: new Map([[1, "one"]]), d: new Date(0), bad: new Date(NaN), re: /x+/g,
  ta: new Int8Array([1, -1]), buf: new ArrayBuffer(4), dv: new DataView(new ArrayBuffer(2)), wm: new WeakMap(),
  boxed: [new String("s"), new Number(2), new Boolean(true), Object(3n)], p: Promise.resolve(1),
  e: err, f: named, cls: class K {}, sym: Symbol("s"), cyc, arr: [1, [2, [3, [4, [5, [6]]]]]],
  nul: Object.assign(Object.create(null), {a: 1}), long: Array.from({length: 120}, (_, i) => i),
  get thrower() { throw new RangeError("no") },
  px: new Proxy({}, {ownKeys() { throw trap }}),
  json: {toJSON() { return {replaced: true} }}};
`

// tamperUse logs and returns the values after the line that may tamper.
const tamperUse = `console.log("n=%d i=%i f=%f j=%j s=%s o=%o %c%%", 3.7, -3.7, "1.5", {a: [1]}, 7, {b: 2}, "css");
console.log(value, [1, 2], "raw");
console.error(err);
console.dir(value);
console.count(); console.count("x"); console.countReset(); console.count();
console.group("g"); console.info("inside\nlines"); console.groupEnd();
console.assert(false, "asserted", 1);
console.warn(w, 10n, named);
return value`

// TestRun_TamperedBuiltins runs the same program twice, once with a line
// that overwrites the built-ins (jsvaluetest.Tamper) and once with an empty
// line instead: the result, console lines and error must not change.
func TestRun_TamperedBuiltins(t *testing.T) {
	r := newRunner(t, config.RunCodeConfig{})
	for _, c := range []struct{ name, before, after string }{
		{"result and console", tamperValues, tamperUse},
		{"thrown error", `const e = new RangeError("thrown " + "x".repeat(20000), {cause: 1});`, `console.log(e); throw e`},
		{"thrown value", `const v = {why: new Map([["k", 1]])};`, `throw v`},
		{"string error", ``, `throw "plain"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			clean := r.Run(context.Background(), Input{Code: c.before + "\n\n" + c.after})
			tampered := r.Run(context.Background(), Input{Code: c.before + "\n" + jsvaluetest.Tamper + "\n" + c.after})
			if len(clean.Stdout)+len(clean.Stderr) == 0 && c.name == "result and console" {
				t.Fatalf("no console output: %+v", clean)
			}
			if !reflect.DeepEqual(clean, tampered) {
				t.Errorf("tampering changed the output")
				diffJSON(t, "", clean, tampered)
			}
			if got, _ := json.Marshal(tampered); strings.Contains(string(got), "forged") || strings.Contains(string(got), "tampered") {
				t.Errorf("output mentions the tampering")
			}
		})
	}
}

// diffJSON reports, shortened, the leaves where two values' JSON differ.
func diffJSON(t *testing.T, path string, want, got any) {
	t.Helper()
	var w, g any
	wb, _ := json.Marshal(want)
	gb, _ := json.Marshal(got)
	json.Unmarshal(wb, &w)
	json.Unmarshal(gb, &g)
	wm, okW := w.(map[string]any)
	gm, okG := g.(map[string]any)
	if okW && okG {
		for k := range wm {
			diffJSON(t, path+"."+k, wm[k], gm[k])
		}
		for k := range gm {
			if _, ok := wm[k]; !ok {
				diffJSON(t, path+"."+k, nil, gm[k])
			}
		}
		return
	}
	wa, okW := w.([]any)
	ga, okG := g.([]any)
	if okW && okG && len(wa) == len(ga) {
		for i := range wa {
			diffJSON(t, fmt.Sprintf("%s[%d]", path, i), wa[i], ga[i])
		}
		return
	}
	if !reflect.DeepEqual(w, g) {
		// Show both from a little before their first difference.
		from := 0
		for from < len(wb) && from < len(gb) && wb[from] == gb[from] {
			from++
		}
		from = max(from-100, 0)
		short := func(b []byte) string {
			b = b[min(from, len(b)):]
			if len(b) > 300 {
				return string(b[:300]) + "…"
			}
			return string(b)
		}
		t.Errorf("%s:\n  clean    %s\n  tampered %s", path, short(wb), short(gb))
	}
}
