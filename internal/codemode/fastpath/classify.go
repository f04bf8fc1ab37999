// Package fastpath recognises call_tool_chain programs that are so simple
// they can be served without starting a V8 isolate: a direct JSON tool
// call, a single awaited tool call with a literal argument, or a request
// for the tool interfaces.
//
// Classification is conservative: anything that is not certainly one of the
// recognised forms is KindNone and must run in V8. A wrong fast path is a
// bug; a missed one only costs speed.
//
// Classify does not know which backends and tools exist. Callers must
// check that Plan.Backend and Plan.Tool name a registered tool and fall
// back to V8 when they do not, so that errors (and names that resolve to
// something else in the isolate, like "constructor") behave exactly as in
// V8.
package fastpath

import (
	"encoding/json"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/isogate/isogate/internal/jssyntax"
)

// MaxCodeSize is the largest code string, in bytes, that Classify inspects.
// Longer code is KindNone without being read.
const MaxCodeSize = 64 << 10

// Kind says how a code string can be served.
type Kind int

const (
	// KindNone means the code needs V8.
	KindNone Kind = iota
	// KindDirect is a JSON object {"tool": "backend.tool", "arguments": {...}}.
	KindDirect
	// KindSimpleCall is a single tool call b.t({...}) with a literal
	// argument whose result is the program's result.
	KindSimpleCall
	// KindInterfaces is `return __interfaces`.
	KindInterfaces
	// KindToolInterface is `return __getToolInterface("name")`.
	KindToolInterface
)

var kindNames = [...]string{"None", "Direct", "SimpleCall", "Interfaces", "ToolInterface"}

// String returns the name of k without the "Kind" prefix, e.g. "SimpleCall".
func (k Kind) String() string {
	if k >= 0 && int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "Kind(" + strconv.Itoa(int(k)) + ")"
}

// Plan is the result of Classify. Only the fields relevant to Kind are set.
type Plan struct {
	// Kind is the tier; KindNone means run the code in V8.
	Kind Kind
	// Backend and Tool name the tool for KindDirect and KindSimpleCall.
	// For b.t(...) they are "b" and "t"; for b["x-y"](...) Tool is the
	// decoded string "x-y"; for direct JSON they are the parts of the
	// "tool" string before and after its first dot.
	Backend, Tool string
	// Name is the full tool name: the "tool" string for direct JSON,
	// Backend+"."+Tool for a simple call.
	Name string
	// Arguments is the call's argument as a compact JSON object, exactly as
	// JSON.stringify would encode it in the isolate; "{}" when the call has
	// no argument. Set for KindDirect and KindSimpleCall only.
	Arguments json.RawMessage
	// InterfaceName is the argument of __getToolInterface for
	// KindToolInterface.
	InterfaceName string
	// Bracket is true when the call was written b["tool"](...) or
	// b['tool'](...).
	Bracket bool
	// At is the byte offset in the code of the call's position as V8
	// reports it in a stack frame: the tool's name in b.t(...), the "(" in
	// b["t"](...); 0 for anything else.
	At int
	// Returns is true when the program returns the value with a return
	// statement (or is direct JSON). A bare statement such as `await b.t()`
	// is an expression statement: code mode returns its value too (the
	// last-expression rule), as V8 does for the same program.
	Returns bool
}

// Classify decides whether code can be served without V8 and, if so, how.
// It never panics, runs in time linear in len(code), and returns a zero
// Plan (KindNone) for anything it does not fully understand, for code that
// is not valid UTF-8 and for code longer than MaxCodeSize.
//
// Recognised forms, each alone in the program apart from whitespace,
// comments and an optional trailing semicolon:
//
//	{"tool": "backend.tool", "arguments": {...}}      (KindDirect)
//	const r = await b.t(ARG); return r                 (also let, var)
//	return await b.t(ARG)
//	return b.t(ARG)
//	await b.t(ARG)
//	b.t(ARG)
//	return __interfaces                                (or __interfaces)
//	return await __getToolInterface("name")            (return, await optional)
//
// where b.t may also be written b["t"] or b['t'], and ARG is empty or an
// object literal made only of literals.
func Classify(code string) Plan {
	if len(code) > MaxCodeSize || !utf8.ValidString(code) {
		return Plan{}
	}
	trimmed := strings.TrimFunc(code, jssyntax.IsSpace)
	if trimmed == "" {
		return Plan{}
	}
	if trimmed[0] == '{' {
		// A program starting with "{" is a block statement; only the
		// direct JSON form is recognised.
		return classifyDirect(trimmed)
	}
	p := stmtParser{src: code}
	p.sc.Init(code)
	if plan, ok := p.program(); ok {
		return plan
	}
	return Plan{}
}

// classifyDirect recognises {"tool": "backend.tool", "arguments": {...}}.
func classifyDirect(s string) Plan {
	if !json.Valid([]byte(s)) {
		return Plan{}
	}
	var sc jssyntax.Scanner
	sc.Init(s)
	// depth -1: the arguments object counts as level 1, as in a call.
	lp := litParser{sc: &sc, json: true, depth: -1}
	v, ok := lp.parseValue(sc.Next())
	if !ok || v.kind != valObject || v.dup || sc.Next().Kind != jssyntax.EOF {
		return Plan{}
	}
	var tool, args *value
	for i := range v.kids {
		switch v.kids[i].key {
		case "tool":
			tool = &v.kids[i].val
		case "arguments":
			args = &v.kids[i].val
		default:
			return Plan{}
		}
	}
	if tool == nil || tool.kind != valString {
		return Plan{}
	}
	backend, name, ok := strings.Cut(tool.str, ".")
	if !ok || backend == "" || name == "" {
		return Plan{}
	}
	raw := json.RawMessage("{}")
	if args != nil {
		if args.kind != valObject {
			return Plan{}
		}
		raw = appendJSON(make([]byte, 0, len(s)), args)
	}
	return Plan{Kind: KindDirect, Backend: backend, Tool: name, Name: tool.str, Arguments: raw, Returns: true}
}

// stmtParser recognises the statement forms of tier 2 and introspection
// from the tokens of jssyntax.Scanner. A token outside the tiny subset the
// fast path knows (a template, a regular expression, an operator, a
// non-ASCII identifier, an unterminated comment or string, ...) matches
// nothing in the grammar, so it always leads to KindNone.
type stmtParser struct {
	src string
	sc  jssyntax.Scanner
}

// program parses the whole code as one of the recognised statements.
func (p *stmtParser) program() (Plan, bool) {
	t := p.sc.Next()
	if t.Kind != jssyntax.Ident {
		return Plan{}, false
	}
	switch t.Text {
	case "const", "let", "var":
		plan, ok := p.declaration()
		plan.Returns = ok
		return plan, ok
	case "return":
		t = p.sc.Next()
		if t.NL {
			// Automatic semicolon insertion: "return\nx" returns undefined.
			return Plan{}, false
		}
		plan, ok := p.expression(t)
		plan.Returns = ok
		return plan, ok
	}
	return p.expression(t)
}

// declaration parses `r = await CALL [;] return r [;]` after const/let/var.
func (p *stmtParser) declaration() (Plan, bool) {
	r, ok := plainIdent(p.sc.Next())
	if !ok || !isBindingName(r) {
		return Plan{}, false
	}
	if !is(p.sc.Next(), "=") || !is(p.sc.Next(), "await") {
		return Plan{}, false
	}
	plan, ok := p.call(p.sc.Next())
	if !ok || plan.Backend == r {
		// const x = await x.t() reads x in its temporal dead zone.
		return Plan{}, false
	}
	t := p.sc.Next()
	if is(t, ";") {
		t = p.sc.Next()
	} else if !t.NL {
		return Plan{}, false // no semicolon can be inserted
	}
	if !is(t, "return") {
		return Plan{}, false
	}
	t = p.sc.Next()
	if t.Kind != jssyntax.Ident || t.Text != r || t.NL {
		return Plan{}, false
	}
	return plan, p.end()
}

// expression parses `[await] CALL`, `__interfaces` or
// `[await] __getToolInterface(STRING)` starting at t, followed by an
// optional semicolon and the end of the code.
func (p *stmtParser) expression(t jssyntax.Token) (Plan, bool) {
	awaited := false
	if is(t, "await") {
		awaited = true
		t = p.sc.Next()
	}
	var plan Plan
	var ok bool
	switch {
	case is(t, "__interfaces"):
		plan, ok = Plan{Kind: KindInterfaces}, !awaited
	case is(t, "__getToolInterface"):
		plan, ok = p.toolInterface()
	default:
		plan, ok = p.call(t)
	}
	return plan, ok && p.end()
}

// toolInterface parses `("name")` after __getToolInterface.
func (p *stmtParser) toolInterface() (Plan, bool) {
	if !is(p.sc.Next(), "(") {
		return Plan{}, false
	}
	s, ok := stringValue(p.sc.Next())
	if !ok || s == "" || !is(p.sc.Next(), ")") {
		return Plan{}, false
	}
	return Plan{Kind: KindToolInterface, InterfaceName: s}, true
}

// call parses `b.t(ARG)` or `b["t"](ARG)` starting at t.
func (p *stmtParser) call(t jssyntax.Token) (Plan, bool) {
	backend, ok := plainIdent(t)
	if !ok || !isBindingName(backend) || backend == "__interfaces" || backend == "__getToolInterface" {
		return Plan{}, false
	}
	plan := Plan{Kind: KindSimpleCall, Backend: backend}
	switch t = p.sc.Next(); {
	case is(t, "."):
		name := p.sc.Next()
		if plan.Tool, ok = plainIdent(name); !ok {
			return Plan{}, false
		}
		plan.At = name.Start
	case is(t, "["):
		plan.Tool, ok = stringValue(p.sc.Next())
		if !ok || plan.Tool == "" || !is(p.sc.Next(), "]") {
			return Plan{}, false
		}
		plan.Bracket = true
	default:
		return Plan{}, false
	}
	plan.Name = plan.Backend + "." + plan.Tool
	if t = p.sc.Next(); !is(t, "(") {
		return Plan{}, false
	}
	if plan.Bracket {
		plan.At = t.Start
	}
	t = p.sc.Next()
	if is(t, ")") {
		plan.Arguments = json.RawMessage("{}")
		return plan, true
	}
	if !is(t, "{") {
		return Plan{}, false // only object arguments
	}
	lp := litParser{sc: &p.sc}
	v, ok := lp.parseValue(t)
	if !ok || !is(p.sc.Next(), ")") {
		return Plan{}, false
	}
	plan.Arguments = appendJSON(make([]byte, 0, len(p.src)), &v)
	return plan, true
}

// end accepts an optional semicolon followed by the end of the code.
func (p *stmtParser) end() bool {
	t := p.sc.Next()
	if is(t, ";") {
		t = p.sc.Next()
	}
	return t.Kind == jssyntax.EOF
}

// is reports whether t is the punctuator or identifier s.
func is(t jssyntax.Token, s string) bool {
	return t.Text == s && (t.Kind == jssyntax.Punct || t.Kind == jssyntax.Ident)
}

// plainIdent returns the name of an identifier written in ASCII without
// escapes, the only ones the fast path takes (not é, not \u0061).
func plainIdent(t jssyntax.Token) (string, bool) {
	if t.Kind != jssyntax.Ident {
		return "", false
	}
	for i := 0; i < len(t.Text); i++ {
		if c := t.Text[i]; c >= utf8.RuneSelf || c == '\\' {
			return "", false
		}
	}
	return t.Text, true
}

// isBindingName reports whether s may be used as a variable name in
// strict-mode async code: it is not a reserved word, a literal, await,
// yield, let, eval or arguments.
func isBindingName(s string) bool {
	return !jssyntax.IsReserved(s)
}
