package codemode

import (
	"strings"

	"github.com/isogate/isogate/internal/jssyntax"
)

// Program shapes: agents write programs in a few forms besides a body that
// ends with `return`. This file recognises them with a small scanner of
// top-level statements (strings, templates, comments and regular
// expressions are skipped; brackets are matched) and rewrites the source so
// the wrapped program returns what the agent meant:
//
//   - a program wrapped in a markdown fence (```js … ```) loses the fence;
//   - without a top-level return, the value of the last expression
//     statement is the result (as a REPL or eval would give it), and when
//     that value is a function taking no parameters (a bare arrow, an IIFE's
//     function) it is called;
//   - a program whose last statement is a function declaration that nothing
//     else names (`async function main() {…}`) calls it.
//
// A rewrite that does not compile is dropped by the caller, so the scanner
// may be approximate: it only has to be right on programs that compile.

// stripFences removes a markdown code fence around the whole program.
func stripFences(code string) string {
	t := strings.TrimSpace(code)
	if !strings.HasPrefix(t, "```") || len(t) < 6 || !strings.HasSuffix(t, "```") {
		return code
	}
	nl := strings.IndexByte(t, '\n')
	if nl < 0 {
		return code
	}
	info := strings.TrimSpace(t[3:nl])
	if strings.ContainsAny(info, "`{}();=") { // not an info string: code on the fence line
		return code
	}
	body := t[nl+1 : len(t)-3]
	if strings.Contains(body, "\n```") {
		return code // several blocks: leave it to the agent
	}
	return body
}

// tok is a token of the program with its bracket depth.
type tok struct {
	jssyntax.Token
	depth int // bracket depth before the token (after it, for a closing one)
}

// word is the text of an identifier, keyword or punctuator; "" for a
// literal.
func (t tok) word() string {
	if t.Kind == jssyntax.Ident || t.Kind == jssyntax.Punct {
		return t.Text
	}
	return ""
}

// scanTop tokenizes code, returning every token (with its bracket depth)
// or ok=false when the code does not scan or is not balanced.
func scanTop(code string) (toks []tok, ok bool) {
	var sc jssyntax.Scanner
	sc.Init(code)
	var stack []byte // open brackets; '`' marks a template's ${
	toks = make([]tok, 0, len(code)/4+8)
	for {
		t := tok{Token: sc.Next(), depth: len(stack)}
		switch t.Kind {
		case jssyntax.EOF:
			return toks, len(stack) == 0
		case jssyntax.Invalid:
			return nil, false
		case jssyntax.TemplateHead:
			stack = append(stack, '`')
		case jssyntax.TemplateMiddle, jssyntax.TemplateTail:
			if len(stack) == 0 || stack[len(stack)-1] != '`' {
				return nil, false
			}
			if t.Kind == jssyntax.TemplateTail {
				stack = stack[:len(stack)-1]
			}
		case jssyntax.Punct:
			switch t.Text {
			case "(", "[", "{":
				stack = append(stack, t.Text[0])
			case ")", "]", "}":
				open := "([{"[strings.Index(")]}", t.Text)]
				if len(stack) == 0 || stack[len(stack)-1] != open {
					return nil, false
				}
				stack = stack[:len(stack)-1]
				t.depth = len(stack)
			}
		}
		toks = append(toks, t)
	}
}

// statementKeywords start statements that are not expressions.
var statementKeywords = map[string]bool{
	"const": true, "let": true, "var": true, "if": true, "for": true, "while": true, "do": true,
	"switch": true, "try": true, "throw": true, "return": true, "break": true, "continue": true,
	"class": true, "import": true, "export": true, "function": true, "{": true, "debugger": true, "with": true,
	";": true,
}

// continuesExpression is true for tokens after which a line break does not
// end a statement, or with which a following line continues the previous one.
func continuesExpression(t tok) bool {
	switch t.Kind {
	case jssyntax.Ident:
		switch t.Text {
		case "new", "typeof", "void", "delete", "await", "in", "of", "instanceof", "yield", "else", "do":
			return true
		}
	case jssyntax.Punct:
		switch t.Text {
		case ")", "]", "}", "++", "--":
			return false
		}
		return true
	}
	return false
}

// startsContinuation is true for tokens that continue the previous line's
// expression when they begin a line.
func startsContinuation(t tok) bool {
	switch t.Kind {
	case jssyntax.Ident:
		return t.Text == "in" || t.Text == "of" || t.Text == "instanceof"
	case jssyntax.Punct:
		switch t.Text {
		case "{", "!", "~", "++", "--":
			return false
		}
		return true
	}
	return false
}

// shape is what the scanner learned about a program's top level.
type shape struct {
	hasReturn bool // a top-level return statement
	last      tok  // first token of the last top-level statement
	lastEnd   int  // end of that statement, without a trailing ';'
	fnName    string
	ok        bool
}

// analyze finds the last top-level statement of code.
func analyze(code string) shape {
	toks, ok := scanTop(code)
	if !ok || len(toks) == 0 {
		return shape{}
	}
	var sh shape
	lastStart := 0
	controlParen := map[int]bool{} // index of ')' closing if/for/while/with/catch/switch (...)
	var parenOpen []int
	var braces []bool // enclosing '{': true for a function body
	inFunction := 0
	for i, t := range toks {
		switch t.word() {
		case "(":
			parenOpen = append(parenOpen, i)
		case ")":
			if len(parenOpen) > 0 {
				o := parenOpen[len(parenOpen)-1]
				parenOpen = parenOpen[:len(parenOpen)-1]
				if o > 0 {
					switch toks[o-1].word() {
					case "if", "for", "while", "with", "catch", "switch":
						controlParen[i] = true
					}
				}
			}
		case "{":
			fn := i > 0 && (toks[i-1].word() == "=>" || toks[i-1].word() == ")" && !controlParen[i-1])
			braces = append(braces, fn)
			if fn {
				inFunction++
			}
		case "}":
			if len(braces) > 0 {
				if braces[len(braces)-1] {
					inFunction--
				}
				braces = braces[:len(braces)-1]
			}
		case "return":
			if inFunction == 0 {
				sh.hasReturn = true
			}
		}
		if t.depth != 0 {
			continue
		}
		switch {
		case i == 0:
			lastStart = 0
		case toks[i-1].word() == ";" && toks[i-1].depth == 0:
			lastStart = i
		case toks[i-1].word() == "}" && toks[i-1].depth == 0 && !startsContinuation(t) &&
			t.word() != "else" && t.word() != "catch" && t.word() != "finally" && t.word() != "while":
			lastStart = i
		case t.NL && !continuesExpression(toks[i-1]) && !startsContinuation(t) &&
			!(toks[i-1].word() == ")" && controlParen[i-1]):
			lastStart = i
		}
	}
	sh.last = toks[lastStart]
	end := toks[len(toks)-1]
	sh.lastEnd = end.End
	if end.word() == ";" && len(toks)-1 > lastStart {
		sh.lastEnd = toks[len(toks)-2].End
	}
	// A trailing function declaration that nothing else names is called.
	first := lastStart
	if toks[first].word() == "async" && first+1 < len(toks) {
		first++
	}
	if toks[first].word() == "function" && first+1 < len(toks) && !toks[first+1].NL {
		name := toks[first+1].word()
		if name == "*" {
			name = ""
		}
		uses := 0
		for _, t := range toks {
			if t.word() == name {
				uses++
			}
		}
		if name != "" && uses == 1 {
			sh.fnName = name
		}
	}
	sh.ok = true
	return sh
}

// resultPrefix is what withResult inserts before the last expression
// statement: error positions after it on that line are shifted by its
// length (program.position takes it out again).
const resultPrefix = "return ((v) => typeof v === \"function\" && v.length === 0 ? v() : v)("

// withResult rewrites code so that it returns the value of its last
// expression statement (or calls its only, trailing function declaration).
// It reports false when the program has a top-level return or ends with a
// statement that has no value.
func withResult(code string) (string, bool) {
	body, ok, _ := withResultAt(code)
	return body, ok
}

// withResultAt is withResult that also returns the offset in code where
// resultPrefix was inserted, or -1.
func withResultAt(code string) (string, bool, int) {
	sh := analyze(code)
	if !sh.ok || sh.hasReturn {
		return code, false, -1
	}
	if sh.fnName != "" {
		return code + "\n;return await " + sh.fnName + "();", true, -1
	}
	first := sh.last.word()
	if first == "async" && !strings.HasPrefix(strings.TrimLeft(code[sh.last.End:], " \t"), "function") {
		first = "" // async arrow
	}
	if statementKeywords[first] || first == "async" {
		return code, false, -1
	}
	if first != "" && sh.last.Kind == jssyntax.Ident && strings.HasPrefix(strings.TrimLeft(code[sh.last.End:], " \t"), ":") &&
		!strings.HasPrefix(strings.TrimLeft(code[sh.last.End:], " \t"), "::") {
		return code, false, -1 // a label
	}
	return code[:sh.last.Start] + resultPrefix + code[sh.last.Start:sh.lastEnd] + "\n)" + code[sh.lastEnd:], true, sh.last.Start
}
