package catalog

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"

	"github.com/isogate/isogate/internal/jssyntax"
)

// This file is the catalogue's one JSON Schema → TypeScript generator.
// Every TypeScript type the catalogue shows comes from a tsGen:
//
//   - named mode ([newNamedGen], [tsGen.declare]) writes declarations:
//     objects with properties become interfaces named after where they
//     occur, $refs to them (recursive ones too) their names. tool_info,
//     __interfaces and `isogate types` show these (see tsdecl.go).
//   - inline mode ([newInlineGen]) writes one type expression: objects are
//     type literals { a: T; b?: U } and a $ref already being expanded is
//     cut to unknown. Signatures and parameter types use it.
//
// Both modes render every other keyword the same way and share the bounds
// below.

// Bounds of the generator. Hostile or merely huge schemas degrade to
// `unknown` (or `Record<string, unknown>`) past them instead of producing
// unbounded output or recursing forever.
const (
	// maxDeclDepth bounds nesting of types within one tool's declarations.
	maxDeclDepth = 8
	// maxDeclBytes bounds the declarations generated for one tool, and
	// any one type expression.
	maxDeclBytes = 32 << 10
	// maxDeclInterfaces bounds the named interfaces generated for one tool.
	maxDeclInterfaces = 64
	// maxDeclProps bounds the properties rendered per object; the rest
	// are covered by an index signature.
	maxDeclProps = 256
	// maxDeclUnion bounds enum literals and union members.
	maxDeclUnion = 64
	// maxDocRunes bounds one JSDoc comment.
	maxDocRunes = 400
	// maxLiteralBytes bounds one literal type (const or enum member).
	maxLiteralBytes = 200
	// maxDeclSteps bounds the sub-schemas visited for one schema, so that
	// shared non-object $refs cannot expand exponentially.
	maxDeclSteps = 4096
)

// tsGen renders TypeScript for one root schema, in named or inline mode.
type tsGen struct {
	root   *schema
	inline bool
	taken  map[string]bool   // type names in use (named mode)
	refs   map[string]string // $ref → interface name (named mode)
	active map[string]bool   // $refs being expanded, to cut cycles
	decls  []string          // finished declarations, in order (named mode)
	size   int
	count  int
	steps  int
}

// newNamedGen returns a generator of declarations for root whose type names
// avoid those in taken, which is updated.
func newNamedGen(root *schema, taken map[string]bool) *tsGen {
	return &tsGen{root: root, taken: taken, refs: map[string]string{}, active: map[string]bool{}}
}

// newInlineGen returns a generator of inline type expressions for
// sub-schemas of root.
func newInlineGen(root *schema) *tsGen {
	return &tsGen{root: root, inline: true, active: map[string]bool{}}
}

// argsType renders the type of a tool's argument object inline, for its
// signature, and reports whether the whole argument may be omitted.
func argsType(in *schema) (t string, optional bool) {
	t, _ = newInlineGen(in).rootType("", true)
	return t, argsOptional(in)
}

// argsOptional reports whether a tool's argument may be omitted: its input
// schema requires no property.
func argsOptional(in *schema) bool {
	root := in.deref(in)
	return root == nil || len(root.Required) == 0
}

// resultType renders the output schema's type inline, or "unknown" without
// one.
func resultType(out *schema) string {
	if out == nil {
		return "unknown"
	}
	t, _ := newInlineGen(out).rootType("", false)
	return t
}

// String returns the declarations generated so far, one blank line after
// each.
func (g *tsGen) String() string {
	var b strings.Builder
	for _, d := range g.decls {
		b.WriteString(d)
		b.WriteString("\n")
	}
	return b.String()
}

// declare declares the root schema under name (named mode) and returns the
// name actually used. A root that does not become an interface still gets a
// named type alias so that signatures read the same for every tool.
func (g *tsGen) declare(name string, input bool) string {
	t, declared := g.rootType(name, input)
	if declared {
		return t
	}
	name = g.allocName(name)
	var b strings.Builder
	writeDoc(&b, "", g.root.deref(g.root).docText())
	b.WriteString("type " + name + " = " + t + ";\n")
	g.add(-1, b.String())
	return name
}

// rootType renders the root schema; input marks a tool's argument object.
// In named mode an object with properties is declared as the interface
// hint, and declared reports that t is its name. References to the root
// ("#" and the root's own $ref) resolve to that interface, or in inline mode
// are cut to unknown.
func (g *tsGen) rootType(hint string, input bool) (t string, declared bool) {
	s := g.root
	r := s.deref(s)
	switch {
	case r == nil || r.Bool != nil:
		return "Record<string, unknown>", false
	case interfaceLike(r) && len(r.Properties) > 0:
		refs := []string{"#"}
		if s.Ref != "" {
			refs = append(refs, s.Ref)
		}
		return g.object(r, hint, 0, refs...), !g.inline
	case input && interfaceLike(r):
		// No parameters: an empty argument object, unless the schema
		// admits any (additionalProperties: true).
		if ap := subSchema(r.AdditionalProperties); ap != nil {
			return "Record<string, " + g.typeExpr(ap, g.subHint(hint, "Value", 0), 1) + ">", false
		}
		if openObject(r) {
			return "Record<string, unknown>", false
		}
		if g.inline {
			return "{}", false // what signatures have always shown
		}
		return "Record<string, never>", false
	}
	return g.typeExpr(r, hint, 0), false
}

// openObject reports whether s says outright that it admits properties
// beyond its own (additionalProperties: true): its type then has an index
// signature, so that the type checker does not call them unknown.
func openObject(s *schema) bool { return string(bytes.TrimSpace(s.AdditionalProperties)) == "true" }

// interfaceLike reports whether s is exactly an object (its properties, if
// any, aside): not a boolean schema, $ref, combinator, enum, const, another
// type or nullable. Only such a schema becomes a named interface.
func interfaceLike(s *schema) bool {
	return s != nil && s.Bool == nil && s.Ref == "" && len(s.AnyOf)+len(s.OneOf)+len(s.AllOf) == 0 &&
		s.Enum == nil && s.Const == nil && !s.Nullable && (len(s.Type) == 0 || (len(s.Type) == 1 && s.Type[0] == "object"))
}

// docText is the schema's description, or its title.
func (s *schema) docText() string {
	if s == nil {
		return ""
	}
	if s.Description != "" {
		return s.Description
	}
	return s.Title
}

// exhausted reports whether a bound on the whole generation has been hit.
func (g *tsGen) exhausted() bool {
	return g.size > maxDeclBytes || g.count >= maxDeclInterfaces || g.steps > maxDeclSteps
}

// add records a declaration at slot i (or appends when i < 0).
func (g *tsGen) add(i int, decl string) {
	g.size += len(decl)
	if i < 0 {
		g.decls = append(g.decls, decl)
		return
	}
	g.decls[i] = decl
}

// allocName returns a free type name derived from base.
func (g *tsGen) allocName(base string) string {
	base = pascal(base)
	if libTypeNames[base] {
		base += "T"
	}
	name := base
	for i := 2; g.taken[name]; i++ {
		name = base + strconv.Itoa(i)
	}
	g.taken[name] = true
	return name
}

// subHint names a nested type after its parent: hint+suffix, then n when
// n > 0. Inline mode names nothing, so it skips the work.
func (g *tsGen) subHint(hint, suffix string, n int) string {
	if g.inline {
		return ""
	}
	if n > 0 {
		suffix += strconv.Itoa(n)
	}
	return hint + suffix
}

// object renders s, an object with properties: in named mode as an
// interface named after hint, returning its name; in inline mode as a type
// literal. refs resolve to the interface (named mode), or are cut to
// unknown while the literal is written (inline mode).
func (g *tsGen) object(s *schema, hint string, depth int, refs ...string) string {
	name, slot := "", -1
	var b strings.Builder
	if g.inline {
		for _, r := range refs {
			if !g.active[r] {
				g.active[r] = true
				defer delete(g.active, r)
			}
		}
		b.WriteString("{ ")
	} else {
		name = g.allocName(hint)
		for _, r := range refs {
			g.refs[r] = name
		}
		g.count++
		slot = len(g.decls)
		g.decls = append(g.decls, "")
		writeDoc(&b, "", s.docText())
		b.WriteString("interface " + name + " {\n")
	}
	req := make(map[string]bool, len(s.Required))
	for _, n := range s.Required {
		req[n] = true
	}
	// member writes one member: "key?: type" (inline) or the same
	// indented and ended by ";\n" after its JSDoc (named).
	n := 0
	member := func(doc, key string, optional bool, t string) {
		if g.inline {
			if n > 0 {
				b.WriteString("; ")
			}
		} else {
			writeDoc(&b, "  ", doc)
			b.WriteString("  ")
		}
		b.WriteString(key)
		if optional {
			b.WriteByte('?')
		}
		b.WriteString(": " + t)
		if !g.inline {
			b.WriteString(";\n")
		}
		n++
	}
	seen := map[string]bool{}
	open := len(s.Properties) > maxDeclProps
	for i, p := range s.Properties {
		if i >= maxDeclProps {
			break
		}
		if seen[p.Name] {
			continue
		}
		seen[p.Name] = true
		var t string
		if g.exhausted() || g.size+b.Len() > maxDeclBytes {
			t, open = "unknown", true
		} else {
			h := ""
			if !g.inline {
				h = name + pascal(p.Name)
			}
			t = g.typeExpr(p.Schema, h, depth+1)
		}
		member(p.Schema.docText(), tsKey(p.Name), !req[p.Name], t)
	}
	if ap := bytes.TrimSpace(s.AdditionalProperties); open || openObject(s) || (len(ap) > 0 && ap[0] == '{') {
		member("", "[key: string]", false, "unknown")
	}
	if g.inline {
		b.WriteString(" }")
		return b.String()
	}
	b.WriteString("}\n")
	g.add(slot, b.String())
	return name
}

// typeExpr renders s as a type expression; in named mode objects with
// properties become interfaces called after hint.
func (g *tsGen) typeExpr(s *schema, hint string, depth int) string {
	if s == nil {
		return "unknown"
	}
	if s.Bool != nil {
		if !*s.Bool {
			return "never"
		}
		return "unknown"
	}
	g.steps++
	if depth > maxDeclDepth || g.steps > maxDeclSteps {
		return "unknown"
	}
	if s.Ref != "" {
		return g.ref(s.Ref, depth)
	}
	var t string
	switch {
	case s.Const != nil:
		t = literalType(s.Const)
	case len(s.Enum) > 0:
		t = enumType(s)
	case len(s.AnyOf) > 0:
		t = g.union(s.AnyOf, hint, depth)
	case len(s.OneOf) > 0:
		t = g.union(s.OneOf, hint, depth)
	case len(s.AllOf) == 1:
		t = g.typeExpr(s.AllOf[0], hint, depth)
	case len(s.AllOf) > 1:
		parts := make([]string, 0, len(s.AllOf))
		for i, a := range s.AllOf {
			if i >= maxDeclUnion {
				break
			}
			parts = append(parts, parenthesize(g.typeExpr(a, g.subHint(hint, "Part", i+1), depth+1)))
		}
		t = strings.Join(parts, " & ")
	default:
		types := s.Type
		if len(types) == 0 {
			switch {
			case len(s.Properties) > 0:
				types = typeList{"object"}
			case len(s.Items) > 0 || len(s.PrefixItems) > 0:
				types = typeList{"array"}
			default:
				return "unknown"
			}
		}
		parts := make([]string, 0, len(types))
		for i, ty := range types {
			if i >= maxDeclUnion {
				break
			}
			parts = append(parts, g.simple(s, ty, hint, depth))
		}
		t = union(parts)
	}
	if len(t) > maxDeclBytes {
		return "unknown"
	}
	if s.Nullable && t != "unknown" {
		t = union([]string{t, "null"})
	}
	return t
}

// ref renders a $ref. In named mode an object with properties becomes a
// (possibly recursive) named interface; anything else is expanded in place
// with cycles cut to unknown.
func (g *tsGen) ref(ref string, depth int) string {
	if name := g.refs[ref]; name != "" {
		return name
	}
	target := g.root.lookupRef(ref)
	if target == nil || g.active[ref] {
		return "unknown"
	}
	if !g.inline && interfaceLike(target) && len(target.Properties) > 0 && !g.exhausted() {
		return g.object(target, refHint(ref), depth, ref)
	}
	g.active[ref] = true
	defer delete(g.active, ref)
	hint := ""
	if !g.inline {
		hint = refHint(ref)
	}
	return g.typeExpr(target, hint, depth+1)
}

// refHint derives a type name from a reference's last segment.
func refHint(ref string) string {
	if i := strings.LastIndexByte(ref, '/'); i >= 0 {
		ref = ref[i+1:]
	}
	if ref == "" || ref == "#" {
		return "Root"
	}
	return ref
}

// union renders the alternatives of anyOf or oneOf.
func (g *tsGen) union(ss []*schema, hint string, depth int) string {
	parts := make([]string, 0, len(ss))
	for i, s := range ss {
		if i >= maxDeclUnion {
			return "unknown"
		}
		h := hint
		if len(ss) > 1 {
			h = g.subHint(hint, "Variant", i+1)
		}
		parts = append(parts, g.typeExpr(s, h, depth+1))
	}
	return union(parts)
}

// enumType renders enum values as a union of literal types, falling back
// to the base type when there are too many or some are not literals.
func enumType(s *schema) string {
	if len(s.Enum) <= maxDeclUnion {
		lits := make([]string, 0, len(s.Enum))
		for _, e := range s.Enum {
			l := literalType(e)
			if l == "unknown" {
				lits = nil
				break
			}
			lits = append(lits, l)
		}
		if lits != nil {
			return union(lits)
		}
	}
	parts := make([]string, 0, len(s.Type))
	for _, ty := range s.Type {
		switch ty {
		case "string", "boolean", "null":
			parts = append(parts, ty)
		case "number", "integer":
			parts = append(parts, "number")
		default:
			return "unknown"
		}
	}
	if len(parts) == 0 {
		return "unknown"
	}
	return union(parts)
}

// simple renders s as the single JSON type ty.
func (g *tsGen) simple(s *schema, ty, hint string, depth int) string {
	switch ty {
	case "string", "boolean", "null":
		return ty
	case "number", "integer":
		return "number"
	case "array":
		var tup []*schema
		if len(s.PrefixItems) > 0 {
			tup = s.PrefixItems
		} else if items := bytes.TrimSpace(s.Items); len(items) > 0 && items[0] == '[' { // draft-4 tuple form
			_ = json.Unmarshal(items, &tup)
		}
		if tup != nil {
			if len(tup) > maxDeclUnion {
				return "unknown[]"
			}
			parts := make([]string, len(tup))
			for i, it := range tup {
				parts[i] = g.typeExpr(it, g.subHint(hint, "Item", i+1), depth+1)
			}
			return "[" + strings.Join(parts, ", ") + "]"
		}
		if is := subSchema(s.Items); is != nil {
			return parenthesize(g.typeExpr(is, g.subHint(hint, "Item", 0), depth+1)) + "[]"
		}
		return "unknown[]"
	case "object":
		if len(s.Properties) == 0 {
			if ap := subSchema(s.AdditionalProperties); ap != nil {
				return "Record<string, " + g.typeExpr(ap, g.subHint(hint, "Value", 0), depth+1) + ">"
			}
			if string(bytes.TrimSpace(s.AdditionalProperties)) == "false" {
				return "Record<string, never>"
			}
			return "Record<string, unknown>"
		}
		if g.exhausted() {
			return "Record<string, unknown>"
		}
		return g.object(s, hint, depth)
	}
	return "unknown"
}

// literalType renders a JSON const or enum value as a TypeScript literal
// type; objects, arrays and oversized values give "unknown".
func literalType(raw json.RawMessage) string {
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return "unknown"
	}
	switch v := v.(type) {
	case nil:
		return "null"
	case bool:
		return strconv.FormatBool(v)
	case string:
		if len(v) > maxLiteralBytes {
			return "string"
		}
		return string(jssyntax.AppendString(nil, v))
	case float64:
		t := compactJSON(raw)
		if len(t) > maxLiteralBytes {
			return "number"
		}
		return t
	}
	return "unknown"
}

// union joins distinct type expressions with " | ", null last; unknown
// absorbs all.
func union(parts []string) string {
	seen := make(map[string]bool, len(parts))
	out := parts[:0:0]
	null := false
	for _, p := range parts {
		switch {
		case p == "unknown":
			return "unknown"
		case p == "null":
			null = true
		case !seen[p]:
			seen[p] = true
			out = append(out, p)
		}
	}
	if null {
		out = append(out, "null")
	}
	return strings.Join(out, " | ")
}

// parenthesize wraps t in parentheses when it is a top-level union or
// intersection, so that it can be followed by [] or joined with &.
func parenthesize(t string) string {
	if topLevel(t, " | ") || topLevel(t, " & ") {
		return "(" + t + ")"
	}
	return t
}

// topLevel reports whether sep occurs in t outside brackets and strings.
func topLevel(t, sep string) bool {
	depth := 0
	inStr := false
	for i := 0; i < len(t); i++ {
		c := t[i]
		switch {
		case inStr:
			if c == '\\' {
				i++
			} else if c == '"' {
				inStr = false
			}
		case c == '"':
			inStr = true
		case c == '{' || c == '(' || c == '[' || c == '<':
			depth++
		case c == '}' || c == ')' || c == ']' || c == '>':
			depth--
		case depth == 0 && strings.HasPrefix(t[i:], sep):
			return true
		}
	}
	return false
}

// tsKey renders a property name as a TypeScript (and JavaScript) object
// key: bare when it is an ASCII identifier, else as a string literal.
func tsKey(name string) string {
	ok := name != ""
	for i := 0; i < len(name) && ok; i++ {
		c := name[i]
		ok = c == '_' || c == '$' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (i > 0 && c >= '0' && c <= '9')
	}
	if ok {
		return name
	}
	return string(jssyntax.AppendString(nil, name))
}

// writeDoc writes text as a JSDoc comment at the given indent; "*/" cannot
// end it early and overlong text is cut.
func writeDoc(b *strings.Builder, indent, text string) {
	text = strings.TrimSpace(text)
	if text == "" {
		return
	}
	if r := []rune(text); len(r) > maxDocRunes {
		text = string(r[:maxDocRunes]) + "…"
	}
	text = strings.ReplaceAll(text, "*/", "*\\/")
	var lines []string
	for _, l := range strings.Split(text, "\n") {
		lines = append(lines, strings.TrimRight(l, " \t\r"))
	}
	if len(lines) == 1 {
		b.WriteString(indent + "/** " + lines[0] + " */\n")
		return
	}
	b.WriteString(indent + "/**\n")
	for _, l := range lines {
		b.WriteString(indent + " *")
		if l != "" {
			b.WriteString(" " + l)
		}
		b.WriteString("\n")
	}
	b.WriteString(indent + " */\n")
}

// pascal turns name into an ASCII PascalCase identifier: runs of letters
// and digits are words, everything else separates them. A leading digit
// gets a "T" in front, and an empty result is "T".
func pascal(name string) string {
	var b strings.Builder
	up := true
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case c >= 'a' && c <= 'z':
			if up {
				c -= 'a' - 'A'
			}
			b.WriteByte(c)
			up = false
		case c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
			if b.Len() == 0 && c <= '9' {
				b.WriteByte('T')
			}
			b.WriteByte(c)
			up = false
		default:
			up = true
		}
	}
	if b.Len() == 0 {
		return "T"
	}
	return b.String()
}

// libTypeNames are global types of TypeScript's standard library that a
// generated name must not redeclare (interfaces would merge into them).
var libTypeNames = map[string]bool{
	"Array": true, "ArrayBuffer": true, "Awaited": true, "BigInt": true, "Boolean": true, "DataView": true,
	"Date": true, "Error": true, "Exclude": true, "Extract": true, "Function": true, "Infer": true, "Intl": true,
	"Iterable": true, "Iterator": true, "JSON": true, "Map": true, "Math": true, "NonNullable": true,
	"Number": true, "Object": true, "Omit": true, "Parameters": true, "Partial": true, "Pick": true,
	"Promise": true, "PromiseLike": true, "Proxy": true, "Readonly": true, "ReadonlyArray": true,
	"Record": true, "Reflect": true, "RegExp": true, "Required": true, "ReturnType": true, "Set": true,
	"String": true, "Symbol": true, "T": true, "TemplateStringsArray": true, "WeakMap": true, "WeakSet": true,
}
