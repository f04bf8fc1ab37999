package jsvalue_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/isogate/isogate/internal/jsvalue"
	"github.com/isogate/isogate/v8sandbox"
)

// serializerPrelude installs the sanitizer as the result serializer (as
// code mode does) and exposes, for the test only, the full conversion and
// the plain-data check.
var serializerPrelude = jsvalue.Scope(`installSerializer(makeSanitizer({}));
const full = makeSanitizer({});
globalThis.__full = (v) => stringify(full(v));
globalThis.__plain = (v) => isPlainData(v, full.maxDepth);
globalThis.__primitive = (v) => isPlainPrimitive(v);`)

// run returns the serialized completion value of source.
func run(t *testing.T, pool *v8sandbox.Pool, source string) string {
	t.Helper()
	res, err := pool.Run(context.Background(), v8sandbox.Job{Source: source, AwaitResult: true, Prelude: serializerPrelude}, nil)
	if err != nil {
		t.Fatalf("%s: %v", source, err)
	}
	return string(res.Value)
}

// A result that is plain data is serialized as it is, and exactly as the
// full conversion would render it; anything else takes the conversion.
func TestPlainDataSerializesAsSanitized(t *testing.T) {
	pool := v8sandbox.NewPool(v8sandbox.Options{Workers: 1})
	defer pool.Close()
	for _, c := range []struct {
		name, expr string
		plain      bool
	}{
		{"parsed", `JSON.parse('{"a":[1,2,{"b":null,"c":"x\\u0000"}],"d":true,"e":-0.5,"__proto__":3}')`, true},
		{"built", `({list: [1, "two", false, null, -0], nested: {deep: [[[]]]}, s: "\ud800"})`, true},
		{"null prototype", `Object.assign(Object.create(null), {a: 1})`, true},
		{"string", `"just text"`, true},
		{"undefined in an object", `({a: undefined, b: 1})`, false},
		{"hole", `[1, , 3]`, false},
		{"non-finite numbers", `({n: NaN, i: -Infinity})`, false},
		{"bigint", `({b: 10n})`, false},
		{"date", `({d: new Date(0), bad: new Date(NaN)})`, false},
		{"map", `new Map([["a", 1]])`, false},
		{"function", `({f() {}})`, false},
		{"cycle", `(() => { const o = {}; o.self = o; return o })()`, false},
		{"own toJSON", `({toJSON() { return "x" }})`, false},
		{"class instance", `new (class P { constructor() { this.x = 1 } })()`, false},
		{"deeper than the limit", `(() => { let o = 1; for (let i = 0; i < 70; i++) o = [o]; return o })()`, false},
		{"toJSON planted on Object.prototype", `(() => { Object.prototype.toJSON = function () { return "polluted" }; return {a: 1} })()`, false},
		{"toJSON planted on Array.prototype", `(() => { Array.prototype.toJSON = function () { return "polluted" }; return [1] })()`, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := run(t, pool, c.expr)
			var want string
			if err := json.Unmarshal([]byte(run(t, pool, "__full("+c.expr+")")), &want); err != nil {
				t.Fatal(err)
			}
			if got != want {
				t.Errorf("serialized %s\nwant (full conversion) %s", got, want)
			}
			if plain := run(t, pool, "__plain("+c.expr+")"); plain != map[bool]string{true: "true", false: "false"}[c.plain] {
				t.Errorf("isPlainData = %s, want %v", plain, c.plain)
			}
		})
	}
}

// A getter that passes the plain-data check and throws when the value is
// serialized makes the serializer fall back to the full conversion, which
// renders the throw instead of failing the run.
func TestSerializerFallsBackWhenPlainDataThrows(t *testing.T) {
	pool := v8sandbox.NewPool(v8sandbox.Options{Workers: 1})
	defer pool.Close()
	got := run(t, pool, `(() => { let reads = 0; return {a: 1, get g() { if (reads++ > 0) throw new Error("again"); return 2 }} })()`)
	if want := `{"a":1,"g":"[Getter threw: Error: again]"}`; got != want {
		t.Errorf("got %s, want %s", got, want)
	}
}

// A primitive result takes the serializer's fast path (isPlainPrimitive:
// no plain-data check) when it is JSON as it is, and the full conversion
// otherwise; either way it serializes exactly as the full conversion
// renders it, prototypes polluted or not.
func TestSerializerFastPathAgrees(t *testing.T) {
	pool := v8sandbox.NewPool(v8sandbox.Options{Workers: 1})
	defer pool.Close()
	const pollute = `Object.prototype.toJSON = Number.prototype.toJSON = String.prototype.toJSON = Boolean.prototype.toJSON = function () { return "polluted" };`
	for _, c := range []struct {
		expr string
		fast bool
	}{
		{`1`, true}, {`-0`, true}, {`0.1`, true}, {`1e308`, true}, {`-5e-324`, true}, {`2 ** 53 + 1`, true},
		{`"text"`, true}, {`""`, true}, {`"\ud800 \u2028 \u0000 \"q\""`, true}, {`true`, true}, {`false`, true}, {`null`, true},
		{`NaN`, false}, {`Infinity`, false}, {`-Infinity`, false}, {`undefined`, false}, {`10n`, false},
		{`Symbol("s")`, false}, {`(function named() {})`, false}, {`new Number(3)`, false}, {`new String("boxed")`, false},
		{`({a: 1})`, false}, {`[1, "x"]`, false},
		{`(() => { ` + pollute + ` return 7 })()`, true},
		{`(() => { ` + pollute + ` return "s" })()`, true},
		{`(() => { ` + pollute + ` return {a: 1} })()`, false},
	} {
		got := run(t, pool, c.expr)
		var want string
		if err := json.Unmarshal([]byte(run(t, pool, "__full("+c.expr+")")), &want); err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Errorf("%s: serialized %s, want (full conversion) %s", c.expr, got, want)
		}
		if fast := run(t, pool, "__primitive("+c.expr+")"); fast != map[bool]string{true: "true", false: "false"}[c.fast] {
			t.Errorf("%s: isPlainPrimitive = %s, want %v", c.expr, fast, c.fast)
		}
	}
}
