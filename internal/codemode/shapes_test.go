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

// TestWithResultTokens pins how the statements are found through the
// tokens of jssyntax.Scanner: strings with escapes, templates with ${},
// regular expressions against divisions, comments and Unicode. The cases
// marked "was" are ones the character scanner shapes.go had before the
// fold got wrong (no rewrite, or one that did not compile).
func TestWithResultTokens(t *testing.T) {
	cases := []struct {
		code    string
		rewrite bool
		tail    string
	}{
		{"const s = \"a\\\";b\"\ns", true, "(s\n)"},
		{"const s = 'a\\';b'\ns", true, "(s\n)"},
		{"const s = \"a\\\r\nb\"\ns", true, "(s\n)"}, // was: no rewrite (CRLF line continuation)
		{"const t = `a;${b + `;${c}`}`\nt", true, "(t\n)"},
		{"`${/[}]/.test(x)}`", true, "(`${/[}]/.test(x)}`\n)"}, // was: no rewrite (regex after ${)
		{"const a = 4, b = 2, g = 1\na / b / g", true, "(a / b / g\n)"},
		{"const r = (1) / 2 / 1\nr", true, "(r\n)"},
		{"x = 1 /* c */ / 2\nx", true, "(x\n)"},
		{"x = y /* a;\n b */\nz", true, "(z\n)"},
		{"const a = 1 // c\u2028a", true, "(a\n)"}, // was: no rewrite (U+2028 was a space)
		{"const a = 1\u2028a", true, "(a\n)"},      // was: no rewrite
		{"const π = 3\nπ", true, "(π\n)"},          // was: no rewrite (π continued the line)
		{"café = 1\ncafé / 2", true, "(café / 2\n)"},
		{"π / 2", true, "(π / 2\n)"},          // was: no rewrite ("/ 2" was a regular expression)
		{"1./2", true, "(1./2\n)"},            // was: no rewrite ("/2" was a regular expression)
		{"ñ: for (;;) break ñ", false, ""},    // was: a rewrite that did not compile (label)
		{"const a = 1\n!!a", true, "(!!a\n)"}, // was: no rewrite ("!!" continued the line)
		{"const a = 1\n.5", true, "(.5\n)"},   // was: no rewrite (".5" continued the line)
		{"x = a ? .5 : 1\nx", true, "(x\n)"},
		{"a = b\n?.c", true, "(a = b\n?.c\n)"},
	}
	for _, c := range cases {
		got, ok := withResult(c.code)
		if ok != c.rewrite || (ok && !strings.Contains(got, c.tail)) {
			t.Errorf("%q: rewrite=%v\n%s", c.code, ok, got)
		}
	}
}

// TestLastExpressionAfterScannerCases runs in V8 programs whose last
// expression the shapes analysis found only once it read the tokens of
// jssyntax.Scanner (Unicode identifiers, U+2028, a CRLF line continuation,
// a regular expression inside ${}).
func TestLastExpressionAfterScannerCases(t *testing.T) {
	f := newFixture(t, Options{})
	for code, want := range map[string]string{
		"const π = 3\nπ":                     "3",
		"const a = 1\u2028a + 1":             "2",
		"const s = \"a\\\r\nb\"\ns":          `ab`,
		"const x = 'y';\n`${/[}]/.test(x)}`": `false`,
		"const a = 1\n!!a":                   "true",
	} {
		if r := f.ok(t, code); r.Tier != TierV8 || r.Text != want {
			t.Errorf("%q: %s %q, want %q", code, r.Tier, r.Text, want)
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
