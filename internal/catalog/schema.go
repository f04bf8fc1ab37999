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
	PatternProperties    json.RawMessage    `json:"patternProperties"`
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

// lookupRef resolves a local reference against the root schema s: "#",
// "#/$defs/Name" or "#/definitions/Name" (with ~0 and ~1 escapes).
// Anything else, or a missing definition, gives nil.
func (s *schema) lookupRef(ref string) *schema {
	if s == nil {
		return nil
	}
	unescape := strings.NewReplacer("~1", "/", "~0", "~").Replace
	switch {
	case ref == "#":
		return s
	case strings.HasPrefix(ref, "#/$defs/"):
		return s.Defs[unescape(strings.TrimPrefix(ref, "#/$defs/"))]
	case strings.HasPrefix(ref, "#/definitions/"):
		return s.Definitions[unescape(strings.TrimPrefix(ref, "#/definitions/"))]
	}
	return nil
}

// deref follows the $ref chain of sub, a sub-schema of the root schema s;
// it returns nil for unresolvable or endless chains.
func (s *schema) deref(sub *schema) *schema {
	for i := 0; sub != nil && sub.Ref != "" && i < 16; i++ {
		sub = s.lookupRef(sub.Ref)
	}
	if sub != nil && sub.Ref != "" {
		return nil
	}
	return sub
}

// compactJSON returns raw without insignificant whitespace.
func compactJSON(raw json.RawMessage) string {
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return string(raw)
	}
	return b.String()
}
