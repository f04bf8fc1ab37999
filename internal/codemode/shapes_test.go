package codemode

import (
	"strings"
	"testing"
)

func TestWithResult(t *testing.T) {
	cases := []struct {
		code    string
		rewrite bool
		tail    string // the rewritten program must contain it
	}{
		{"1 + 1", true, "(1 + 1\n)"},
		{"const a = 1;\na + 1;", true, "(a + 1\n);"},
		{"const a = 1\na", true, "(a\n)"},
		{"return 1", false, ""},
		{"if (x) { return 1 }\nfoo()", false, ""},
		{"const f = () => { return 1 };\nf()", true, "(f()\n)"},
		{"async function main() { return 1 }", true, "return await main();"},
		{"main();\nasync function main() { return 1 }", false, ""},
		{"async () => {\n  return 1\n}", true, "(async () => {"},
		{"(async () => 1)()", true, "((async () => 1)()\n)"},
		{"const x = 1;", false, ""},
		{"for (const x of xs)\n  foo(x)", false, ""},
		{"foo\n  .bar()\n  .baz()", true, "(foo\n  .bar()\n  .baz()\n)"},
		{"const s = `a ${b} c`;\ns", true, "(s\n)"},
		{"const r = /a;b/g;\nr.source", true, "(r.source\n)"},
		{"x = 1 // note", true, "(x = 1\n) // note"},
		{"label: for (;;) break label", false, ""},
		{"try { a() } catch (e) { b() }", false, ""},
	}
	for _, c := range cases {
		got, ok := withResult(c.code)
		if ok != c.rewrite || (ok && !strings.Contains(got, c.tail)) {
			t.Errorf("%q: rewrite=%v\n%s", c.code, ok, got)
		}
	}
}

func TestStripFences(t *testing.T) {
	for in, want := range map[string]string{
		"```js\nreturn 1\n```":            "return 1\n",
		"  ```\nreturn 1\n```\n":          "return 1\n",
		"```typescript\nconst a = 1\n```": "const a = 1\n",
		"return 1":                        "return 1",
		"```js\na\n```\n```js\nb\n```":    "```js\na\n```\n```js\nb\n```",
	} {
		if got := stripFences(in); got != want {
			t.Errorf("%q: got %q, want %q", in, got, want)
		}
	}
}

// BenchmarkWithResult measures the shapes analysis of a typical agent
// program (every tier-3 run goes through it once).
func BenchmarkWithResult(b *testing.B) {
	code := `
// Find open bugs and summarise them.
const issues = await github.search_issues({query: 'is:open label:bug', per_page: 50});
const byLabel = {};
for (const i of issues.items) {
  for (const l of i.labels ?? []) {
    byLabel[l.name] = (byLabel[l.name] || 0) + 1; /* count */
  }
}
const top = Object.entries(byLabel).sort((a, b) => b[1] - a[1]).slice(0, 5);
const re = /bug|crash/i;
const text = ` + "`${top.length} labels, ${issues.items.filter(i => re.test(i.title)).length} crashes`" + `;
({ top, text, ratio: top.length / 2 })
`
	b.ReportAllocs()
	b.SetBytes(int64(len(code)))
	for b.Loop() {
		if _, ok := withResult(code); !ok {
			b.Fatal("not rewritten")
		}
	}
}
