package programs

import (
	"encoding/json"
	"regexp"
	"slices"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/isogate/isogate/v8sandbox"
)

// Parameters returns the JSON Schema of a program's args from what
// save_program was given: a JSON Schema object (type "object"), a JSON
// string holding a TypeScript signature (`{ city: string; days?: number }`,
// `(args: {...})`), or nothing, when it is inferred from how code reads
// args (args.x, args["x"], const { x } = args: each an untyped, optional
// property). It also returns the signature when one was given.
func Parameters(raw json.RawMessage, code string) (json.RawMessage, string, error) {
	trimmed := strings.TrimSpace(string(raw))
	switch {
	case trimmed == "" || trimmed == "null":
		return mustJSON(inferred(code)), "", nil
	case strings.HasPrefix(trimmed, `"`):
		var sig string
		if err := json.Unmarshal(raw, &sig); err != nil {
			return nil, "", v8sandbox.Errorf(CodeInvalid, "parameters: %v", err)
		}
		s, err := fromSignature(sig)
		if err != nil {
			return nil, "", err
		}
		return mustJSON(s), strings.TrimSpace(sig), nil
	}
	var s jsonschema.Schema
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, "", v8sandbox.Errorf(CodeInvalid, "parameters: not a JSON Schema nor a TypeScript signature: %v", err)
	}
	if s.Type != "object" {
		return nil, "", v8sandbox.Errorf(CodeInvalid, `parameters: a JSON Schema of "type": "object" (the program's args), not %s`, Quote(s.Type))
	}
	if _, err := s.Resolve(nil); err != nil {
		return nil, "", v8sandbox.Errorf(CodeInvalid, "parameters: %v", err)
	}
	// Resolve lets any "type" through, and a schema with an unknown one
	// refuses every call (INVALID_ARGUMENTS, "want \"nonsense\"").
	var tree any
	_ = json.Unmarshal(raw, &tree) // it parsed above
	if bad := unknownType(tree); bad != "" {
		return nil, "", v8sandbox.Errorf(CodeInvalid, `parameters: "type": %s is not a JSON Schema type (%s)`, Quote(bad), strings.Join(jsonTypes, ", "))
	}
	return raw, "", nil
}

// jsonTypes are the values of a JSON Schema "type".
var jsonTypes = []string{"array", "boolean", "integer", "null", "number", "object", "string"}

// dataKeywords hold JSON values, not schemas: a "type" inside them is data.
var dataKeywords = map[string]bool{"const": true, "enum": true, "default": true, "examples": true}

// unknownType returns the first "type" in a schema's JSON that names no
// JSON type ("" if none).
func unknownType(v any) string {
	switch v := v.(type) {
	case map[string]any:
		for k, c := range v {
			if dataKeywords[k] {
				continue
			}
			if k == "type" {
				names, _ := c.([]any)
				if name, ok := c.(string); ok {
					names = []any{name}
				}
				for _, n := range names {
					if name, ok := n.(string); ok && !slices.Contains(jsonTypes, name) {
						return name
					}
				}
			}
			if bad := unknownType(c); bad != "" {
				return bad
			}
		}
	case []any:
		for _, c := range v {
			if bad := unknownType(c); bad != "" {
				return bad
			}
		}
	}
	return ""
}

// objectSchema is the schema of args with props (each a schema object:
// MCP clients refuse boolean sub-schemas) and required names.
func objectSchema(props map[string]*jsonschema.Schema, required []string) *jsonschema.Schema {
	if props == nil {
		props = map[string]*jsonschema.Schema{}
	}
	slices.Sort(required)
	return &jsonschema.Schema{Type: "object", Properties: props, Required: required}
}

var (
	argsDot     = regexp.MustCompile(`\bargs\??\.([A-Za-z_$][\w$]*)`)
	argsIndex   = regexp.MustCompile(`\bargs\??\.?\[\s*["']([^"'\\]+)["']\s*\]`)
	argsDestruc = regexp.MustCompile(`\{([^{}]*)\}\s*=\s*args\b`)
)

// inferred is the schema of the args code reads.
func inferred(code string) *jsonschema.Schema {
	props := map[string]*jsonschema.Schema{}
	for _, m := range argsDot.FindAllStringSubmatch(code, -1) {
		props[m[1]] = untyped()
	}
	for _, m := range argsIndex.FindAllStringSubmatch(code, -1) {
		props[m[1]] = untyped()
	}
	for _, m := range argsDestruc.FindAllStringSubmatch(code, -1) {
		for _, part := range strings.Split(m[1], ",") {
			name, _, _ := strings.Cut(strings.TrimSpace(part), ":")
			name, _, _ = strings.Cut(name, "=")
			name = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(name), "..."))
			if identRE.MatchString(name) {
				props[name] = untyped()
			}
		}
	}
	return objectSchema(props, nil)
}

// untyped is the schema of a parameter of no declared type: an object
// (an empty schema marshals as `true`, which MCP clients refuse).
func untyped() *jsonschema.Schema {
	return &jsonschema.Schema{Description: "read by the program as args.<name>; its type is not declared"}
}

var identRE = regexp.MustCompile(`^[A-Za-z_$][\w$]*$`)

// fromSignature converts a TypeScript object type of args into a schema.
func fromSignature(sig string) (*jsonschema.Schema, error) {
	s := strings.TrimSpace(sig)
	// (args: {...}) or (args?: {...}) => ...: keep the object type.
	if strings.HasPrefix(s, "(") {
		if i := strings.Index(s, "{"); i >= 0 {
			if j := matching(s, i); j > i {
				s = s[i : j+1]
			}
		}
	}
	if !strings.HasPrefix(s, "{") || matching(s, 0) != len(s)-1 {
		return nil, v8sandbox.Errorf(CodeInvalid, "parameters: a TypeScript signature is an object type such as `{ city: string; days?: number }`, got %s", Quote(sig))
	}
	body := s[1 : len(s)-1]
	props := map[string]*jsonschema.Schema{}
	var required []string
	for _, member := range splitTop(body) {
		member = strings.TrimSpace(member)
		if member == "" {
			continue
		}
		colon := strings.Index(member, ":")
		if colon < 0 {
			return nil, v8sandbox.Errorf(CodeInvalid, "parameters: member %s has no type (name: type)", Quote(member))
		}
		name := strings.TrimSpace(member[:colon])
		optional := strings.HasSuffix(name, "?")
		name = strings.Trim(strings.TrimSuffix(name, "?"), `"'`)
		if name == "" {
			return nil, v8sandbox.Errorf(CodeInvalid, "parameters: member %s has no name", Quote(member))
		}
		props[name] = typeSchema(strings.TrimSpace(member[colon+1:]))
		if !optional {
			required = append(required, name)
		}
	}
	return objectSchema(props, required), nil
}

// typeSchema maps a TypeScript type onto a schema: primitives, arrays,
// unions of string or number literals; anything else is untyped.
func typeSchema(t string) *jsonschema.Schema {
	t = strings.TrimSpace(t)
	switch {
	case t == "string" || t == "number" || t == "boolean":
		return &jsonschema.Schema{Type: t}
	case t == "integer":
		return &jsonschema.Schema{Type: "integer"}
	case strings.HasSuffix(t, "[]"):
		return &jsonschema.Schema{Type: "array", Items: typeSchema(strings.TrimSuffix(t, "[]"))}
	case strings.HasPrefix(t, "Array<") && strings.HasSuffix(t, ">"):
		return &jsonschema.Schema{Type: "array", Items: typeSchema(t[len("Array<") : len(t)-1])}
	case strings.HasPrefix(t, "{"):
		return &jsonschema.Schema{Type: "object"}
	}
	var enum []any
	for _, alt := range strings.Split(t, "|") {
		alt = strings.TrimSpace(alt)
		var v any
		if len(alt) >= 2 && (alt[0] == '\'' || alt[0] == '"') && alt[len(alt)-1] == alt[0] {
			v = alt[1 : len(alt)-1]
		} else if err := json.Unmarshal([]byte(alt), &v); err != nil {
			return &jsonschema.Schema{Description: "TypeScript type: " + t}
		}
		enum = append(enum, v)
	}
	return &jsonschema.Schema{Enum: enum}
}

// matching returns the index of the bracket closing s[open], or -1.
func matching(s string, open int) int {
	depth := 0
	for i := open; i < len(s); i++ {
		switch s[i] {
		case '{', '(', '[', '<':
			depth++
		case '}', ')', ']', '>':
			depth--
			if depth == 0 {
				return i
			}
		}
	}
	return -1
}

// splitTop splits an object type's body at ; and , outside brackets.
func splitTop(body string) []string {
	var out []string
	depth, start := 0, 0
	for i := 0; i < len(body); i++ {
		switch body[i] {
		case '{', '(', '[', '<':
			depth++
		case '}', ')', ']', '>':
			depth--
		case ';', ',', '\n':
			if depth == 0 {
				out = append(out, body[start:i])
				start = i + 1
			}
		}
	}
	return append(out, body[start:])
}
