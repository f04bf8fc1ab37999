package codemode

import (
	"context"
	"strings"
	"testing"
)

// TestReferenceErrorColumn: an undefined name is located at its own
// column, on the first line of a program and on later ones, in plain
// JavaScript and in TypeScript (esbuild's source map), with and without the
// rewrite that returns a last expression.
func TestReferenceErrorColumn(t *testing.T) {
	e, _ := durableEngine(t)
	for code, want := range map[string]string{
		`return await everythin.get_sum({ a: 1, b: 2 })`:                            "everythin is not defined (line 1, column 14)",
		"const a = 1;\n  return await everythin.get_sum({ a, b: 2 })":               "everythin is not defined (line 2, column 16)",
		`await everythin.get_sum({ a: 1, b: 2 })`:                                   "everythin is not defined (line 1, column 7)",
		"const a: number = 1;\nreturn await everythin.get_sum({ a, b: 2 })":         "everythin is not defined (line 2, column 14)",
		"const a: number = 1;\nconst x = 2; return await everythin.get_sum({ a })":  "everythin is not defined (line 2, column 27)",
		`const o = {everythin: 1}; return o.everythin + "everythin" + everythin`:    "everythin is not defined (line 1, column 62)",
		`const s = "😀"; return await everythin.x({})`:                               "everythin is not defined (line 1, column 30)",
		"export default async function main() {\n  return await everythin.x({})\n}": "everythin is not defined (line 2, column 16)",
		`const x = 1; return x + nope`:                                              "nope is not defined (line 1, column 25)",
	} {
		resp := e.Execute(context.Background(), Request{Code: code})
		if !resp.IsError || !strings.Contains(resp.Text, want) {
			t.Errorf("%q:\n got %q\nwant %q", code, firstLine(resp.Text), want)
		}
	}
}

func firstLine(s string) string { l, _, _ := strings.Cut(s, "\n"); return l }
