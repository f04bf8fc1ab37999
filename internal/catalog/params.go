package catalog

import (
	"encoding/json"
	"strings"
)

// params lists the top-level properties of an input schema.
// Their types are rendered inline by one generator, so that the schema's
// bounds apply to them together.
func params(in *schema) []Param {
	root := in.deref(in)
	if root == nil {
		return nil
	}
	req := make(map[string]bool, len(root.Required))
	for _, n := range root.Required {
		req[n] = true
	}
	g := newInlineGen(in)
	out := make([]Param, 0, len(root.Properties))
	for _, p := range root.Properties {
		outer := p.Schema
		inner := in.deref(outer)
		prm := Param{Name: p.Name, Type: g.typeExpr(outer, "", 1), Required: req[p.Name]}
		for _, s := range []*schema{outer, inner} {
			if s == nil {
				continue
			}
			if prm.Description == "" {
				prm.Description = strings.TrimSpace(s.Description)
			}
			if prm.Default == nil && s.Default != nil {
				prm.Default = json.RawMessage(compactJSON(s.Default))
			}
			if prm.Enum == nil {
				prm.Enum = enumValues(s)
			}
		}
		if prm.Description == "" && inner != nil {
			prm.Description = strings.TrimSpace(inner.Title)
		}
		out = append(out, prm)
	}
	return out
}

// enumValues returns the allowed values of s: its enum, its const, or the
// consts of a oneOf/anyOf made only of consts.
func enumValues(s *schema) []any {
	raws := s.Enum
	if raws == nil && s.Const != nil {
		raws = []json.RawMessage{s.Const}
	}
	if raws == nil {
		alts := s.OneOf
		if alts == nil {
			alts = s.AnyOf
		}
		for _, a := range alts {
			if a == nil || a.Const == nil {
				raws = nil
				break
			}
			raws = append(raws, a.Const)
		}
	}
	if raws == nil {
		return nil
	}
	out := make([]any, 0, len(raws))
	for _, raw := range raws {
		var v any
		if json.Unmarshal(raw, &v) == nil {
			out = append(out, v)
		}
	}
	return out
}

// exampleArgs renders an argument object literal containing every required
// parameter with a placeholder value: { a: 0, b: 0 }.
func exampleArgs(in *schema) string {
	root := in.deref(in)
	if root == nil || len(root.Required) == 0 {
		return "{}"
	}
	req := make(map[string]bool, len(root.Required))
	for _, n := range root.Required {
		req[n] = true
	}
	var parts []string
	seen := map[string]bool{}
	add := func(name string, s *schema) {
		if seen[name] {
			return
		}
		seen[name] = true
		parts = append(parts, tsKey(name)+": "+placeholder(in, s, 0))
	}
	for _, p := range root.Properties {
		if req[p.Name] {
			add(p.Name, p.Schema)
		}
	}
	for _, n := range root.Required { // required but not described
		add(n, nil)
	}
	if len(parts) == 0 {
		return "{}"
	}
	return "{ " + strings.Join(parts, ", ") + " }"
}

// maxExampleDepth bounds the alternatives placeholder follows.
const maxExampleDepth = 6

// placeholder returns a JS literal standing in for a value of schema s, a
// sub-schema of root: its default, const or first enum value if any, else a
// neutral value of its type ("…", 0, false, [], {}, null).
func placeholder(root, s *schema, depth int) string {
	if s != nil && s.Default != nil {
		return compactJSON(s.Default)
	}
	s = root.deref(s)
	if s == nil || depth > maxExampleDepth {
		return `"…"`
	}
	switch {
	case s.Default != nil:
		return compactJSON(s.Default)
	case s.Const != nil:
		return compactJSON(s.Const)
	case len(s.Enum) > 0:
		return compactJSON(s.Enum[0])
	}
	for _, alts := range [][]*schema{s.AnyOf, s.OneOf} {
		for _, a := range alts {
			if d := root.deref(a); d != nil && !(len(d.Type) == 1 && d.Type[0] == "null") {
				return placeholder(root, a, depth+1)
			}
		}
	}
	if len(s.AllOf) > 0 {
		return placeholder(root, s.AllOf[0], depth+1)
	}
	for _, ty := range s.Type {
		switch ty {
		case "string":
			return `"…"`
		case "number", "integer":
			return "0"
		case "boolean":
			return "false"
		case "array":
			return "[]"
		case "object":
			return "{}"
		}
	}
	switch {
	case len(s.Properties) > 0:
		return "{}"
	case len(s.Items) > 0:
		return "[]"
	case len(s.Type) == 1 && s.Type[0] == "null":
		return "null"
	}
	return `"…"`
}
