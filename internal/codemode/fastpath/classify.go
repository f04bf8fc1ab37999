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
	p := stmtParser{lx: newLexer(code)}
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
	lx := newLexer(s)
	// depth -1: the arguments object counts as level 1, as in a call.
	lp := litParser{lx: &lx, json: true, depth: -1}
	v, ok := lp.parseValue(lx.next())
	if !ok || v.kind != valObject || v.dup || lx.next().kind != tokEOF {
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

// stmtParser recognises the statement forms of tier 2 and introspection.
type stmtParser struct {
	lx lexer
}

// program parses the whole code as one of the recognised statements.
func (p *stmtParser) program() (Plan, bool) {
	t := p.lx.next()
	if t.kind != tokIdent {
		return Plan{}, false
	}
	switch t.text {
	case "const", "let", "var":
		plan, ok := p.declaration()
		plan.Returns = ok
		return plan, ok
	case "return":
		t = p.lx.next()
		if t.nl {
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
	r := p.lx.next()
	if r.kind != tokIdent || !isBindingName(r.text) {
		return Plan{}, false
	}
	if !p.lx.next().is("=") || !p.lx.next().is("await") {
		return Plan{}, false
	}
	plan, ok := p.call(p.lx.next())
	if !ok || plan.Backend == r.text {
		// const x = await x.t() reads x in its temporal dead zone.
		return Plan{}, false
	}
	t := p.lx.next()
	if t.is(";") {
		t = p.lx.next()
	} else if !t.nl {
		return Plan{}, false // no semicolon can be inserted
	}
	if !t.is("return") {
		return Plan{}, false
	}
	t = p.lx.next()
	if t.kind != tokIdent || t.text != r.text || t.nl {
		return Plan{}, false
	}
	return plan, p.end()
}

// expression parses `[await] CALL`, `__interfaces` or
// `[await] __getToolInterface(STRING)` starting at t, followed by an
// optional semicolon and the end of the code.
func (p *stmtParser) expression(t token) (Plan, bool) {
	awaited := false
	if t.is("await") {
		awaited = true
		t = p.lx.next()
	}
	var plan Plan
	var ok bool
	switch {
	case t.is("__interfaces"):
		plan, ok = Plan{Kind: KindInterfaces}, !awaited
	case t.is("__getToolInterface"):
		plan, ok = p.toolInterface()
	default:
		plan, ok = p.call(t)
	}
	return plan, ok && p.end()
}

// toolInterface parses `("name")` after __getToolInterface.
func (p *stmtParser) toolInterface() (Plan, bool) {
	if !p.lx.next().is("(") {
		return Plan{}, false
	}
	s := p.lx.next()
	if s.kind != tokString || s.str == "" || !p.lx.next().is(")") {
		return Plan{}, false
	}
	return Plan{Kind: KindToolInterface, InterfaceName: s.str}, true
}

// call parses `b.t(ARG)` or `b["t"](ARG)` starting at t.
func (p *stmtParser) call(t token) (Plan, bool) {
	if t.kind != tokIdent || !isBindingName(t.text) ||
		t.text == "__interfaces" || t.text == "__getToolInterface" {
		return Plan{}, false
	}
	plan := Plan{Kind: KindSimpleCall, Backend: t.text}
	switch t = p.lx.next(); {
	case t.is("."):
		t = p.lx.next()
		if t.kind != tokIdent {
			return Plan{}, false
		}
		plan.Tool = t.text
	case t.is("["):
		t = p.lx.next()
		if t.kind != tokString || t.str == "" || !p.lx.next().is("]") {
			return Plan{}, false
		}
		plan.Tool = t.str
		plan.Bracket = true
	default:
		return Plan{}, false
	}
	plan.Name = plan.Backend + "." + plan.Tool
	if !p.lx.next().is("(") {
		return Plan{}, false
	}
	t = p.lx.next()
	if t.is(")") {
		plan.Arguments = json.RawMessage("{}")
		return plan, true
	}
	if !t.is("{") {
		return Plan{}, false // only object arguments
	}
	lp := litParser{lx: &p.lx}
	v, ok := lp.parseValue(t)
	if !ok || !p.lx.next().is(")") {
		return Plan{}, false
	}
	plan.Arguments = appendJSON(make([]byte, 0, len(p.lx.src)), &v)
	return plan, true
}

// end accepts an optional semicolon followed by the end of the code.
func (p *stmtParser) end() bool {
	t := p.lx.next()
	if t.is(";") {
		t = p.lx.next()
	}
	return t.kind == tokEOF
}

// isBindingName reports whether s may be used as a variable name in
// strict-mode async code: it is not a reserved word, a literal, await,
// yield, let, eval or arguments.
func isBindingName(s string) bool {
	return !jssyntax.IsReserved(s)
}
