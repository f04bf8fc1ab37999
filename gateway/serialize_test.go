package gateway

import (
	"context"
	"encoding/json"
	"reflect"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/isogate/isogate/config"
)

// call_tool_chain and run_code render values with one serializer: the same
// value gives the same JSON through both tools, nothing is silently lost,
// nothing throws, and plain objects keep their plain JSON shape.
func TestOneSerializerForBothTools(t *testing.T) {
	h := newHarness(t, func(c *config.Config) { c.RunCode.Enabled = true })
	cases := []struct{ name, expr, want string }{
		{"plain", `({a: 1, b: [true, null, "s"], c: {d: 2.5}})`, `{"a":1,"b":[true,null,"s"],"c":{"d":2.5}}`},
		{"map", `new Map([["a", 1], ["b", 2]])`, `{"a":1,"b":2}`},
		{"map object keys", `new Map([[1, "one"], [{k: 2}, "obj"]])`, `[[1,"one"],[{"k":2},"obj"]]`},
		{"set", `new Set([1, "x", 1])`, `[1,"x"]`},
		{"bigint", `({n: 12345678901234567890n})`, `{"n":"12345678901234567890"}`},
		{"date", `new Date(Date.UTC(2024, 0, 2))`, `"2024-01-02T00:00:00.000Z"`},
		{"cycle", `(() => { const o = {a: 1}; o.self = o; return o })()`, `{"a":1,"self":"[Circular]"}`},
		{"function", `({f: function named() {}})`, `{"f":"[Function: named]"}`},
		{"undefined", `({u: undefined, v: [undefined]})`, `{"u":null,"v":[null]}`},
		{"throwing getter", `({ok: 1, get bad() { throw new RangeError("no") }})`, `{"bad":"[Getter threw: RangeError: no]","ok":1}`},
		{"proxy", `({p: new Proxy({a: 1}, {get() { throw new Error("trap") }})})`, `{"p":"[Getter threw: Error: trap]"}`},
		{"poisoned toJSON", `(() => { Array.prototype.toJSON = () => "forged"; return {a: [1, 2]} })()`, `{"a":[1,2]}`},
		{"Object.prototype.toJSON", `(() => { Object.prototype.toJSON = function () { return {n: 1} }; return {a: 1} })()`, `{"n":1}`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			text, isErr := h.chain(t, map[string]any{"code": "return " + c.expr})
			if isErr {
				t.Fatalf("call_tool_chain: %s", text)
			}
			var chain, want any
			if err := json.Unmarshal([]byte(text), &chain); err != nil {
				chain = text // a string result is returned as its text
			}
			json.Unmarshal([]byte(c.want), &want)
			if !reflect.DeepEqual(chain, want) {
				t.Fatalf("call_tool_chain: %s, want %s", text, c.want)
			}
			res, err := h.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "run_code", Arguments: map[string]any{"code": "return " + c.expr}})
			if err != nil {
				t.Fatal(err)
			}
			var out struct {
				OK     bool `json:"ok"`
				Result any  `json:"result"`
			}
			b, _ := json.Marshal(res.StructuredContent)
			if err := json.Unmarshal(b, &out); err != nil || !out.OK {
				t.Fatalf("run_code: %v %s", err, res.Content[0].(*mcp.TextContent).Text)
			}
			if !reflect.DeepEqual(out.Result, chain) {
				t.Fatalf("run_code %v differs from call_tool_chain %v", out.Result, chain)
			}
		})
	}
}
