package catalog

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
)

// schema is the subset of JSON Schema the catalogue understands: enough to
// list parameters, render TypeScript-style signatures and build example
// calls. Unknown keywords are ignored.
type schema struct {
	Bool                 *bool              `json:"-"` // set when the schema is literally true or false
	Type                 typeList           `json:"type"`
	Title                string             `json:"title"`
	Description          string             `json:"description"`
	Properties           props              `json:"properties"`
	Required             []string           `json:"required"`
	Enum                 []json.RawMessage  `json:"enum"`
	Const                json.RawMessage    `json:"const"`
	Default              json.RawMessage    `json:"default"`
	Items                json.RawMessage    `json:"items"`
	PrefixItems          []*schema          `json:"prefixItems"`
	AdditionalProperties json.RawMessage    `json:"additionalProperties"`
	AnyOf                []*schema          `json:"anyOf"`
	OneOf                []*schema          `json:"oneOf"`
	AllOf                []*schema          `json:"allOf"`
	Ref                  string             `json:"$ref"`
	Defs                 map[string]*schema `json:"$defs"`
	Definitions          map[string]*schema `json:"definitions"`
	Nullable             bool               `json:"nullable"` // OpenAPI 3.0 style
}

// UnmarshalJSON accepts boolean schemas and ignores malformed keywords
// rather than failing: a backend's odd schema must not hide its tool.
func (s *schema) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) == 0 || b[0] != '{' {
		var v bool
		if json.Unmarshal(b, &v) == nil {
			s.Bool = &v
		}
		return nil
	}
	type plain schema
	if err := json.Unmarshal(b, (*plain)(s)); err != nil {
		// Fall back keyword by keyword so one bad field does not lose the rest.
		*s = schema{}
		var m map[string]json.RawMessage
		if json.Unmarshal(b, &m) != nil {
			return nil
		}
		for k, v := range m {
			one, _ := json.Marshal(map[string]json.RawMessage{k: v})
			_ = json.Unmarshal(one, (*plain)(s))
		}
	}
	return nil
}

// typeList is the "type" keyword: a single name or a list of names.
type typeList []string

// UnmarshalJSON accepts "string" as well as ["string", "null"].
func (t *typeList) UnmarshalJSON(b []byte) error {
	if string(bytes.TrimSpace(b)) == "null" {
		*t = nil
		return nil
	}
	var one string
	if json.Unmarshal(b, &one) == nil {
		*t = typeList{one}
		return nil
	}
	var many []string
	if err := json.Unmarshal(b, &many); err != nil {
		return err
	}
	*t = many
	return nil
}

// prop is one named property, in document order.
type prop struct {
	Name   string
	Schema *schema
}

// props keeps "properties" in the order the backend wrote them so that
// signatures and parameter lists follow the author's intent. (Schemas given
// as Go maps arrive with their keys sorted.)
type props []prop

// UnmarshalJSON decodes a "properties" object keeping key order.
func (p *props) UnmarshalJSON(b []byte) error {
	if string(bytes.TrimSpace(b)) == "null" {
		*p = nil
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return errors.New("properties is not an object")
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		name, _ := tok.(string)
		s := new(schema)
		if err := dec.Decode(s); err != nil {
			return err
		}
		*p = append(*p, prop{Name: name, Schema: s})
	}
	return nil
}

// parseSchema decodes raw JSON into a schema; nil or invalid input yields nil.
func parseSchema(raw json.RawMessage) *schema {
	if len(raw) == 0 {
		return nil
	}
	s := new(schema)
	if json.Unmarshal(raw, s) != nil {
		return nil
	}
	return s
}

// subSchema decodes a keyword that may hold a schema or a boolean.
func subSchema(raw json.RawMessage) *schema {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || raw[0] != '{' {
		return nil
	}
	return parseSchema(raw)
}

// maxTypeDepth bounds inline expansion of nested objects and $refs.
const maxTypeDepth = 6

// resolver renders types for one root schema, resolving local $refs.
type resolver struct {
	root   *schema
	active map[string]bool // $refs being expanded, to cut cycles
	steps  int             // sub-schemas visited, bounded by maxDeclSteps
}

func newResolver(root *schema) *resolver {
	return &resolver{root: root, active: map[string]bool{}}
}

// lookupRef resolves "#", "#/$defs/Name" and "#/definitions/Name".
func (r *resolver) lookupRef(ref string) *schema {
	if r.root == nil {
		return nil
	}
	unescape := strings.NewReplacer("~1", "/", "~0", "~").Replace
	switch {
	case ref == "#":
		return r.root
	case strings.HasPrefix(ref, "#/$defs/"):
		return r.root.Defs[unescape(strings.TrimPrefix(ref, "#/$defs/"))]
	case strings.HasPrefix(ref, "#/definitions/"):
		return r.root.Definitions[unescape(strings.TrimPrefix(ref, "#/definitions/"))]
	}
	return nil
}

// deref follows $ref chains; it returns nil for unresolvable references.
func (r *resolver) deref(s *schema) *schema {
	for i := 0; s != nil && s.Ref != "" && i < 16; i++ {
		s = r.lookupRef(s.Ref)
	}
	if s != nil && s.Ref != "" {
		return nil
	}
	return s
}

// tsType renders s as a TypeScript type expression.
func (r *resolver) tsType(s *schema, depth int) string {
	r.steps++
	if s == nil || r.steps > maxDeclSteps {
		return "unknown"
	}
	if s.Bool != nil {
		if !*s.Bool {
			return "never"
		}
		return "unknown"
	}
	if s.Ref != "" {
		if depth > maxTypeDepth || r.active[s.Ref] {
			return "unknown"
		}
		r.active[s.Ref] = true
		t := r.tsType(r.lookupRef(s.Ref), depth+1)
		delete(r.active, s.Ref)
		return t
	}
	var t string
	switch {
	case s.Const != nil:
		t = compactJSON(s.Const)
	case len(s.Enum) > 0:
		lits := make([]string, len(s.Enum))
		for i, e := range s.Enum {
			lits[i] = compactJSON(e)
		}
		t = union(lits)
	case len(s.AnyOf) > 0:
		t = r.union(s.AnyOf, depth)
	case len(s.OneOf) > 0:
		t = r.union(s.OneOf, depth)
	case len(s.AllOf) == 1:
		t = r.tsType(s.AllOf[0], depth)
	case len(s.AllOf) > 1:
		parts := make([]string, len(s.AllOf))
		for i, a := range s.AllOf {
			parts[i] = parenthesize(r.tsType(a, depth))
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
		parts := make([]string, len(types))
		for i, ty := range types {
			parts[i] = r.simpleType(s, ty, depth)
		}
		t = union(parts)
	}
	if s.Nullable && t != "unknown" {
		t = union([]string{t, "null"})
	}
	return t
}

func (r *resolver) union(ss []*schema, depth int) string {
	parts := make([]string, len(ss))
	for i, s := range ss {
		parts[i] = r.tsType(s, depth)
	}
	return union(parts)
}

// simpleType renders s as the single JSON type ty.
func (r *resolver) simpleType(s *schema, ty string, depth int) string {
	switch ty {
	case "string":
		return "string"
	case "number", "integer":
		return "number"
	case "boolean":
		return "boolean"
	case "null":
		return "null"
	case "array":
		if len(s.PrefixItems) > 0 {
			return r.tuple(s.PrefixItems, depth)
		}
		items := bytes.TrimSpace(s.Items)
		if len(items) > 0 && items[0] == '[' { // draft-4 tuple form
			var tup []*schema
			if json.Unmarshal(items, &tup) == nil {
				return r.tuple(tup, depth)
			}
		}
		if is := subSchema(items); is != nil {
			return parenthesize(r.tsType(is, depth+1)) + "[]"
		}
		return "unknown[]"
	case "object":
		return r.object(s, depth, false)
	}
	return "unknown"
}

func (r *resolver) tuple(items []*schema, depth int) string {
	parts := make([]string, len(items))
	for i, it := range items {
		parts[i] = r.tsType(it, depth+1)
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

// object renders an object type inline: { a: number; b?: string }.
// At the root of an input schema an object without properties means "no
// arguments" and renders as {}; elsewhere it is a free-form record.
func (r *resolver) object(s *schema, depth int, root bool) string {
	if len(s.Properties) == 0 {
		if ap := subSchema(s.AdditionalProperties); ap != nil {
			return "Record<string, " + r.tsType(ap, depth+1) + ">"
		}
		if root || string(bytes.TrimSpace(s.AdditionalProperties)) == "false" {
			return "{}"
		}
		return "Record<string, unknown>"
	}
	if depth >= maxTypeDepth {
		return "object"
	}
	req := make(map[string]bool, len(s.Required))
	for _, n := range s.Required {
		req[n] = true
	}
	var b strings.Builder
	b.WriteString("{ ")
	for i, p := range s.Properties {
		if i > 0 {
			b.WriteString("; ")
		}
		b.WriteString(propKey(p.Name))
		if !req[p.Name] {
			b.WriteByte('?')
		}
		b.WriteString(": ")
		b.WriteString(r.tsType(p.Schema, depth+1))
	}
	b.WriteString(" }")
	return b.String()
}

// argsType renders the type of a tool's argument object and reports whether
// the whole argument may be omitted (no required properties).
func argsType(in *schema) (t string, optional bool) {
	r := newResolver(in)
	root := r.deref(in)
	if root == nil || root.Bool != nil {
		return "Record<string, unknown>", true
	}
	isObject := len(root.Type) == 0 || (len(root.Type) == 1 && root.Type[0] == "object")
	if isObject && len(root.AnyOf)+len(root.OneOf)+len(root.AllOf) == 0 && root.Enum == nil && root.Const == nil {
		return r.object(root, 0, true), len(root.Required) == 0
	}
	return r.tsType(root, 0), len(root.Required) == 0
}

// resultType renders the output schema's type, or "unknown" without one.
func resultType(out *schema) string {
	if out == nil {
		return "unknown"
	}
	return newResolver(out).tsType(out, 0)
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

// compactJSON returns raw without insignificant whitespace.
func compactJSON(raw json.RawMessage) string {
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return string(raw)
	}
	return b.String()
}
