package catalog

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// CheckArguments refuses what the input schema refuses, saying what is
// wrong and what the tool takes (issue 43: `x` for `a` reached the backend
// and came back as its raw -32602), and admits what JSON Schema admits:
// extra keys unless additionalProperties is false, any schema it cannot
// check faithfully.
func TestCheckArguments(t *testing.T) {
	closed := map[string]any{"type": "object", "additionalProperties": false,
		"properties": map[string]any{"a": num("First"), "b": num("Second")}, "required": []string{"a", "b"}}
	open := obj([]string{"a", "b"}, map[string]any{"a": num("First"), "b": num("Second")})
	nested := obj([]string{"filter"}, map[string]any{"filter": obj([]string{"owner"}, map[string]any{"owner": str("")}),
		"tags": map[string]any{"type": "array", "items": str("")}})
	c := New()
	c.SetBackend("everything", nil, []*mcp.Tool{
		{Name: "get-sum", InputSchema: open},
		{Name: "add", InputSchema: closed},
		{Name: "search", InputSchema: nested},
		{Name: "draft4", InputSchema: map[string]any{"$schema": "http://json-schema.org/draft-04/schema#", "type": "object",
			"properties": map[string]any{"a": num("")}, "required": []string{"a"}}},
		{Name: "openapi", InputSchema: obj([]string{"a"}, map[string]any{"a": map[string]any{"type": "string", "nullable": true}})},
		{Name: "remote", InputSchema: obj(nil, map[string]any{"a": map[string]any{"$ref": "https://example.com/a.json"}})},
		{Name: "patterned", InputSchema: map[string]any{"type": "object", "additionalProperties": false,
			"patternProperties": map[string]any{"^x_": num("")}}},
	})
	for _, tc := range []struct {
		tool, args string
		want       []string // substrings of the refusal; nil: admitted
	}{
		{"get-sum", `{"a":1,"b":2}`, nil},
		{"get-sum", `{"a":1,"b":2,"c":3}`, nil}, // extra keys are JSON Schema's default
		{"get-sum", `{"x":1,"y":2}`, []string{"`x` (did you mean `a`?) and `y` (did you mean `b`?) are not parameters of everything.get_sum",
			"the required parameters `a` and `b` are missing", "it takes { a: number; b: number }"}},
		{"get-sum", `{"a":"1","b":2}`, []string{"everything.get_sum: `a` must be number, not string; it takes"}},
		{"get-sum", `{}`, []string{"everything.get_sum: the required parameters `a` and `b` are missing"}},
		{"add", `{"a":1,"bb":2}`, []string{"`bb` (did you mean `b`?) is not a parameter of everything.add", "the required parameter `b` is missing"}},
		{"add", `{"a":1,"b":2,"c":3}`, []string{"`c` is not a parameter of everything.add; it takes"}},
		{"search", `{"filter":{}}`, []string{"everything.search: `filter.owner` is missing (required); it takes"}},
		{"search", `{"filter":{"owner":"x"},"tags":[1]}`, []string{"`tags[]` must be string, not integer"}},
		{"search", `{"filter":{"owner":"x"},"tags":["a"]}`, nil},
		{"draft4", `{}`, nil},
		{"openapi", `{"a":null}`, nil},
		{"remote", `{"a":1}`, nil},
		{"patterned", `{"x_1":1}`, nil},
		{"patterned", `{"x_1":"s"}`, []string{"must be number, not string"}},
		{"nope", `{"x":1}`, nil}, // not in the catalogue: the backend decides
	} {
		err := c.CheckArguments("everything", tc.tool, json.RawMessage(tc.args))
		if tc.want == nil {
			if err != nil {
				t.Errorf("%s(%s): refused: %v", tc.tool, tc.args, err)
			}
			continue
		}
		var ae *ArgumentError
		if !errors.As(err, &ae) {
			t.Errorf("%s(%s): %v, want an *ArgumentError", tc.tool, tc.args, err)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s(%s): %q does not say %q", tc.tool, tc.args, err, w)
			}
		}
	}
}

// BenchmarkCheckArguments: the check every call pays, on a schema resolved
// already (get-sum of server-everything).
func BenchmarkCheckArguments(b *testing.B) {
	c := New()
	c.SetBackend("everything", nil, []*mcp.Tool{{Name: "get-sum", InputSchema: obj([]string{"a", "b"}, map[string]any{"a": num("First"), "b": num("Second")})}})
	args := json.RawMessage(`{"a":1,"b":2}`)
	for b.Loop() {
		if err := c.CheckArguments("everything", "get-sum", args); err != nil {
			b.Fatal(err)
		}
	}
}
