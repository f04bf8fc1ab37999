package jssyntax

import (
	"strings"
	"testing"
)

// scanAll returns the tokens of src as "Kind:text" (with a leading "\n"
// when NL is set), up to and including EOF or Invalid.
func scanAll(src string) []string {
	var s Scanner
	s.Init(src)
	var out []string
	for {
		t := s.Next()
		if t.Text != src[t.Start:t.End] {
			return append(out, "BAD-SPAN")
		}
		w := t.Kind.String()
		if t.Text != "" {
			w += ":" + t.Text
		}
		if t.NL {
			w = "\n" + w
		}
		out = append(out, w)
		if t.Kind == EOF || t.Kind == Invalid {
			return out
		}
	}
}

func TestScanner(t *testing.T) {
	cases := []struct {
		src  string
		want string // tokens joined by " "
	}{
		// Identifiers and keywords, ASCII and Unicode.
		{"const x = a.b", "Ident:const Ident:x Punct:= Ident:a Punct:. Ident:b EOF"},
		{"$_a1 café π ǅx", "Ident:$_a1 Ident:café Ident:π Ident:ǅx EOF"},
		{`\u0061b a\u{62}c`, `Ident:\u0061b Ident:a\u{62}c EOF`},
		{"a\u200db", "Ident:a\u200db EOF"},
		{"#x @d a\\b", `Punct:# Ident:x Punct:@ Ident:d Ident:a Punct:\ Ident:b EOF`},
		{"a→b", "Ident:a Punct:→ Ident:b EOF"},

		// Whitespace, line terminators and comments.
		{"a\nb", "Ident:a \nIdent:b EOF"},
		{"a\r\nb\u2028c\u2029d", "Ident:a \nIdent:b \nIdent:c \nIdent:d EOF"},
		{"\u00a0\ufeffa\u3000\u2003b\v\f", "Ident:a Ident:b EOF"},
		{"a // c\nb", "Ident:a \nIdent:b EOF"},
		{"a // c\u2028b", "Ident:a \nIdent:b EOF"},
		{"a /* c */ b /* \n */ c", "Ident:a Ident:b \nIdent:c EOF"},
		{"a /* c", "Ident:a Invalid"},
		{"a\n// only", "Ident:a \nEOF"},

		// Strings.
		{`"a" 'b'`, `String:"a" String:'b' EOF`},
		{`"a\"b" 'c\'d' "\\"`, `String:"a\"b" String:'c\'d' String:"\\" EOF`},
		{`"it's" '"q"'`, `String:"it's" String:'"q"' EOF`},
		{"\"a\\\nb\" \"c\\\r\nd\"", "String:\"a\\\nb\" String:\"c\\\r\nd\" EOF"},
		{"\"a\u2028b\"", "String:\"a\u2028b\" EOF"},
		{"\"a\nb\"", "Invalid"},
		{"x = \"a\rb\"", "Ident:x Punct:= Invalid"},
		{`"abc`, "Invalid"},
		{`"abc\`, "Invalid"},
		{`"/* not */" '//'`, `String:"/* not */" String:'//' EOF`},

		// Templates.
		{"`a`", "Template:`a` EOF"},
		{"`a${b}c`", "TemplateHead:`a${ Ident:b TemplateTail:}c` EOF"},
		{"`a${b}c${d}e`", "TemplateHead:`a${ Ident:b TemplateMiddle:}c${ Ident:d TemplateTail:}e` EOF"},
		{"`${ {a: 1} }`", "TemplateHead:`${ Punct:{ Ident:a Punct:: Number:1 Punct:} TemplateTail:}` EOF"},
		{"`a${`b${c}d`}e`", "TemplateHead:`a${ TemplateHead:`b${ Ident:c TemplateTail:}d` TemplateTail:}e` EOF"},
		{"`\\` \\${x} $ {y}`", "Template:`\\` \\${x} $ {y}` EOF"},
		{"`line\nbreak`", "Template:`line\nbreak` EOF"},
		{"`a${b", "TemplateHead:`a${ Ident:b EOF"},
		{"`abc", "Invalid"},
		{"} { }", "Punct:} Punct:{ Punct:} EOF"},

		// Regular expressions and division.
		{"/a/g", "RegExp:/a/g EOF"},
		{"x = /a;b/gi", "Ident:x Punct:= RegExp:/a;b/gi EOF"},
		{"a / b / c", "Ident:a Punct:/ Ident:b Punct:/ Ident:c EOF"},
		{"1 / 2", "Number:1 Punct:/ Number:2 EOF"},
		{"(a) / 2", "Punct:( Ident:a Punct:) Punct:/ Number:2 EOF"},
		{"a[0] / 2", "Ident:a Punct:[ Number:0 Punct:] Punct:/ Number:2 EOF"},
		{"return /x/", "Ident:return RegExp:/x/ EOF"},
		{"typeof /x/", "Ident:typeof RegExp:/x/ EOF"},
		{"f(/[/]/)", "Ident:f Punct:( RegExp:/[/]/ Punct:) EOF"},
		{`/\//.test(s)`, `RegExp:/\// Punct:. Ident:test Punct:( Ident:s Punct:) EOF`},
		{"`${/[}]/.source}`", "TemplateHead:`${ RegExp:/[}]/ Punct:. Ident:source TemplateTail:}` EOF"},
		{"'s' / 2", "String:'s' Punct:/ Number:2 EOF"},
		{"a /= 2", "Ident:a Punct:/= Number:2 EOF"},
		{"x = /a\nb/", "Ident:x Punct:= Invalid"},
		{"x = /abc", "Ident:x Punct:= Invalid"},

		// Numbers.
		{"0 1.5 .5 5. 1e3 2.5E-3 1.e5", "Number:0 Number:1.5 Number:.5 Number:5. Number:1e3 Number:2.5E-3 Number:1.e5 EOF"},
		{"0x1F 0o17 0b101 0XFF", "Number:0x1F Number:0o17 Number:0b101 Number:0XFF EOF"},
		{"1n 1_000 017 1a 1e 0x", "Number:1n Number:1_000 Number:017 Number:1a Number:1e Number:0x EOF"},
		{"1e+ 1..toString()", "Number:1e Punct:+ Number:1. Punct:. Ident:toString Punct:( Punct:) EOF"},
		{"1.2.3 -1", "Number:1.2 Number:.3 Punct:- Number:1 EOF"},

		// Punctuators: longest match.
		{"a===b!==c", "Ident:a Punct:=== Ident:b Punct:!== Ident:c EOF"},
		{"a>>>=b>>c>=d", "Ident:a Punct:>>>= Ident:b Punct:>> Ident:c Punct:>= Ident:d EOF"},
		{"x=>x ...a a?.b a??=b", "Ident:x Punct:=> Ident:x Punct:... Ident:a Ident:a Punct:?. Ident:b Ident:a Punct:??= Ident:b EOF"},
		{"a?.5:1", "Ident:a Punct:? Number:.5 Punct:: Number:1 EOF"},
		{"a++ + --b !!c", "Ident:a Punct:++ Punct:+ Punct:-- Ident:b Punct:! Punct:! Ident:c EOF"},
		{"a**=2&&=b||c", "Ident:a Punct:**= Number:2 Punct:&&= Ident:b Punct:|| Ident:c EOF"},
	}
	for _, c := range cases {
		got := strings.Join(scanAll(c.src), " ")
		if got != c.want {
			t.Errorf("%q\n got %q\nwant %q", c.src, got, c.want)
		}
	}
}

func TestScannerAfterEnd(t *testing.T) {
	for _, src := range []string{"a", `"x`} {
		var s Scanner
		s.Init(src)
		last := s.Next()
		for last.Kind != EOF && last.Kind != Invalid {
			last = s.Next()
		}
		for range 3 {
			if t2 := s.Next(); t2.Kind != last.Kind {
				t.Errorf("%q: after %v got %v", src, last.Kind, t2.Kind)
			}
		}
	}
}

func TestIsSpace(t *testing.T) {
	for _, r := range " \t\v\f\n\r\u00a0\ufeff\u2028\u2029\u3000\u2003\u1680" {
		if !IsSpace(r) {
			t.Errorf("%U not space", r)
		}
	}
	for _, r := range "a_\u0085\u200b\x00" {
		if IsSpace(r) {
			t.Errorf("%U space", r)
		}
	}
}

func TestIsIDStartPart(t *testing.T) {
	for _, r := range "aZ_$éπ中ǅⅫ" {
		if !IsIDStart(r) || !IsIDPart(r) {
			t.Errorf("%U not an identifier start", r)
		}
	}
	for _, r := range "09\u0301\u200c\u200d‿" {
		if IsIDStart(r) || !IsIDPart(r) {
			t.Errorf("%U: start %v part %v", r, IsIDStart(r), IsIDPart(r))
		}
	}
	for _, r := range " -→😀" {
		if IsIDStart(r) || IsIDPart(r) {
			t.Errorf("%U in an identifier", r)
		}
	}
}

// FuzzScanner checks that the Scanner never panics, ends, and returns
// tokens in order, each non-empty and with Text the source of its span.
func FuzzScanner(f *testing.F) {
	for _, s := range []string{"const r = await b.t({a: [1, 'x']}); return r",
		"`a${`b${c}d`}e` / 2 /re/g", "x = \"a\\\r\nb\" // c\u2028π", "0x1F 1n 1..toString() a?.5:1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		var s Scanner
		s.Init(src)
		end := 0
		for n := 0; ; n++ {
			tok := s.Next()
			if tok.Kind == EOF || tok.Kind == Invalid {
				return
			}
			if n > len(src) || tok.Start < end || tok.End <= tok.Start || tok.End > len(src) ||
				tok.Text != src[tok.Start:tok.End] {
				t.Fatalf("%q: bad token %+v after offset %d", src, tok, end)
			}
			end = tok.End
		}
	})
}
