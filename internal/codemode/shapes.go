package codemode

import (
	"strings"
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

// tok is one top-level token of the scanner.
type tok struct {
	start, end int
	text       string // identifier, keyword or punctuator; "" for literals
	nl         bool   // a line terminator precedes it
	depth      int    // bracket depth before the token
}

// scanTop tokenizes code, returning every token (with its bracket depth)
// or ok=false when the code is not balanced.
func scanTop(code string) (toks []tok, ok bool) {
	var stack []byte // open brackets; '`' marks a template's ${
	prevSig := ""    // previous significant token text, for regex detection
	prevLit := false
	nl := false
	i := 0
	n := len(code)
	for i < n {
		c := code[i]
		switch {
		case c == '\n' || c == '\r':
			nl = true
			i++
			continue
		case c == ' ' || c == '\t' || c == '\v' || c == '\f' || c >= 0x80 && isSpaceAt(code, i):
			i += spaceLen(code, i)
			continue
		case c == '/' && i+1 < n && code[i+1] == '/':
			for i < n && code[i] != '\n' && code[i] != '\r' {
				i++
			}
			continue
		case c == '/' && i+1 < n && code[i+1] == '*':
			end := strings.Index(code[i+2:], "*/")
			if end < 0 {
				return nil, false
			}
			if strings.ContainsAny(code[i:i+2+end], "\n\r") {
				nl = true
			}
			i += end + 4
			continue
		}
		t := tok{start: i, nl: nl, depth: len(stack)}
		nl = false
		lit := false
		switch {
		case c == '"' || c == '\'':
			j := i + 1
			for j < n && code[j] != c {
				if code[j] == '\\' {
					j++
				} else if code[j] == '\n' {
					return nil, false
				}
				j++
			}
			if j >= n {
				return nil, false
			}
			i, lit = j+1, true
		case c == '`' || c == '}' && len(stack) > 0 && stack[len(stack)-1] == '`':
			if c == '}' {
				stack = stack[:len(stack)-1]
			}
			j := i + 1
			for ; j < n; j++ {
				if code[j] == '\\' {
					j++
					continue
				}
				if code[j] == '`' {
					break
				}
				if code[j] == '$' && j+1 < n && code[j+1] == '{' {
					break
				}
			}
			if j >= n {
				return nil, false
			}
			if code[j] == '`' {
				i = j + 1
			} else {
				stack = append(stack, '`')
				i = j + 2
			}
			lit = true
		case c == '/' && regexAllowed(prevSig, prevLit):
			j, inClass := i+1, false
			for ; j < n; j++ {
				ch := code[j]
				if ch == '\\' {
					j++
					continue
				}
				if ch == '\n' {
					return nil, false
				}
				if ch == '[' {
					inClass = true
				} else if ch == ']' {
					inClass = false
				} else if ch == '/' && !inClass {
					break
				}
			}
			if j >= n {
				return nil, false
			}
			j++
			for j < n && isIdentByte(code[j]) {
				j++
			}
			i, lit = j, true
		case isIdentByte(c) || c >= 0x80:
			j := i
			for j < n && (isIdentByte(code[j]) || code[j] >= 0x80 && !isSpaceAt(code, j)) {
				j++
			}
			t.text = code[i:j]
			if c >= '0' && c <= '9' {
				t.text, lit = "", true
			}
			i = j
		case c == '(' || c == '[' || c == '{':
			stack = append(stack, c)
			t.text = string(c)
			i++
		case c == ')' || c == ']' || c == '}':
			open := map[byte]byte{')': '(', ']': '[', '}': '{'}[c]
			if len(stack) == 0 || stack[len(stack)-1] != open {
				return nil, false
			}
			stack = stack[:len(stack)-1]
			t.text = string(c)
			t.depth = len(stack)
			i++
		default:
			j := i + 1
			for j < n && j-i < 4 && strings.IndexByte("=<>!&|?+-*%^.:~", code[j]) >= 0 && strings.IndexByte("=<>!&|?+-*%^.", c) >= 0 {
				j++
			}
			t.text = code[i:j]
			i = j
		}
		t.end = i
		toks = append(toks, t)
		prevSig, prevLit = t.text, lit
	}
	return toks, len(stack) == 0
}

func isIdentByte(c byte) bool {
	return c == '_' || c == '$' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// isSpaceAt reports a non-ASCII JavaScript space at code[i:].
func isSpaceAt(code string, i int) bool {
	for _, s := range []string{"\u00a0", "\ufeff", "\u2028", "\u2029", "\u3000", "\u2003", "\u2002", "\u2009", "\u200a"} {
		if strings.HasPrefix(code[i:], s) {
			return true
		}
	}
	return false
}

func spaceLen(code string, i int) int {
	if code[i] < 0x80 {
		return 1
	}
	if code[i] == 0xc2 {
		return 2
	}
	return 3
}

// regexAllowed reports whether a '/' after the previous token starts a
// regular expression rather than a division.
func regexAllowed(prev string, prevLit bool) bool {
	if prevLit {
		return false
	}
	switch prev {
	case ")", "]", "}":
		return false
	case "", "return", "typeof", "instanceof", "in", "of", "new", "delete", "void", "throw", "case", "do", "else", "await", "yield":
		return true
	}
	return !isIdentByte(prev[0])
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
func continuesExpression(s string) bool {
	switch s {
	case "", ")", "]", "}", "++", "--":
		return false
	}
	if isIdentByte(s[0]) {
		switch s {
		case "new", "typeof", "void", "delete", "await", "in", "of", "instanceof", "yield", "else", "do":
			return true
		}
		return false
	}
	return true
}

// startsContinuation is true for tokens that continue the previous line's
// expression when they begin a line.
func startsContinuation(s string) bool {
	if s == "" || isIdentByte(s[0]) {
		return s == "in" || s == "of" || s == "instanceof"
	}
	switch s {
	case "{", "!", "~", "++", "--":
		return false
	}
	return true
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
		switch t.text {
		case "(":
			parenOpen = append(parenOpen, i)
		case ")":
			if len(parenOpen) > 0 {
				o := parenOpen[len(parenOpen)-1]
				parenOpen = parenOpen[:len(parenOpen)-1]
				if o > 0 {
					switch toks[o-1].text {
					case "if", "for", "while", "with", "catch", "switch":
						controlParen[i] = true
					}
				}
			}
		case "{":
			fn := i > 0 && (toks[i-1].text == "=>" || toks[i-1].text == ")" && !controlParen[i-1])
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
		case toks[i-1].text == ";" && toks[i-1].depth == 0:
			lastStart = i
		case toks[i-1].text == "}" && toks[i-1].depth == 0 && !startsContinuation(t.text) &&
			t.text != "else" && t.text != "catch" && t.text != "finally" && t.text != "while":
			lastStart = i
		case t.nl && !continuesExpression(toks[i-1].text) && !startsContinuation(t.text) &&
			!(toks[i-1].text == ")" && controlParen[i-1]):
			lastStart = i
		}
	}
	sh.last = toks[lastStart]
	end := toks[len(toks)-1]
	sh.lastEnd = end.end
	if end.text == ";" && len(toks)-1 > lastStart {
		sh.lastEnd = toks[len(toks)-2].end
	}
	// A trailing function declaration that nothing else names is called.
	first := lastStart
	if toks[first].text == "async" && first+1 < len(toks) {
		first++
	}
	if toks[first].text == "function" && first+1 < len(toks) && !toks[first+1].nl {
		name := toks[first+1].text
		if name == "*" {
			name = ""
		}
		uses := 0
		for _, t := range toks {
			if t.text == name {
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

// withResult rewrites code so that it returns the value of its last
// expression statement (or calls its only, trailing function declaration).
// It reports false when the program has a top-level return or ends with a
// statement that has no value.
func withResult(code string) (string, bool) {
	sh := analyze(code)
	if !sh.ok || sh.hasReturn {
		return code, false
	}
	if sh.fnName != "" {
		return code + "\n;return await " + sh.fnName + "();", true
	}
	first := sh.last.text
	if first == "async" && !strings.HasPrefix(strings.TrimLeft(code[sh.last.end:], " \t"), "function") {
		first = "" // async arrow
	}
	if statementKeywords[first] || first == "async" {
		return code, false
	}
	if sh.last.end < len(code) && first != "" && isIdentByte(first[0]) && strings.HasPrefix(strings.TrimLeft(code[sh.last.end:], " \t"), ":") &&
		!strings.HasPrefix(strings.TrimLeft(code[sh.last.end:], " \t"), "::") {
		return code, false // a label
	}
	return code[:sh.last.start] + "return ((v) => typeof v === \"function\" && v.length === 0 ? v() : v)(" +
		code[sh.last.start:sh.lastEnd] + "\n)" + code[sh.lastEnd:], true
}
