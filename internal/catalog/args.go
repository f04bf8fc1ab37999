package catalog

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
)

// ArgumentError is a tool call whose arguments the tool's input schema
// refuses: the backend would refuse them too, so the call is not made. Its
// message names what is wrong (an unknown parameter, with the closest
// parameter name; a missing one; a value of the wrong type) and the type
// the tool takes, e.g. "`x` is not a parameter of everything.get_sum (did
// you mean `a`?); it takes { a: number; b: number }".
type ArgumentError struct {
	// Tool is the tool as a program calls it ("backend.tool", sanitized).
	Tool string `json:"tool"`
	// Takes is the TypeScript-style type of the tool's argument object.
	Takes string `json:"takes"`
	// Unknown are the keys the schema does not name, sorted; Extra reports
	// whether the schema admits keys it does not name (JSON Schema's
	// default), when they are only a hint next to the real mistake.
	Unknown []string `json:"unknown,omitempty"`
	Extra   bool     `json:"extra_allowed,omitempty"`
	// Suggestions maps an unknown key to the parameter it is likely a
	// typo of.
	Suggestions map[string]string `json:"suggestions,omitempty"`
	// Missing are the required parameters not given, in schema order.
	Missing []string `json:"missing,omitempty"`
	// Problem is what else the validator found (a wrong type, a value out
	// of its enum, …), "" when the keys explain the refusal.
	Problem string `json:"problem,omitempty"`
}

// Error renders the refusal for an agent.
func (e *ArgumentError) Error() string {
	var parts []string
	if len(e.Unknown) > 0 {
		names := make([]string, len(e.Unknown))
		for i, k := range e.Unknown {
			names[i] = "`" + k + "`"
			if s := e.Suggestions[k]; s != "" {
				names[i] += " (did you mean `" + s + "`?)"
			}
		}
		if len(names) == 1 {
			parts = append(parts, names[0]+" is not a parameter of "+e.Tool)
		} else {
			parts = append(parts, strings.Join(names[:len(names)-1], ", ")+" and "+names[len(names)-1]+" are not parameters of "+e.Tool)
		}
	}
	if len(e.Missing) > 0 {
		names := make([]string, len(e.Missing))
		for i, m := range e.Missing {
			names[i] = "`" + m + "`"
		}
		what := "the required parameter " + names[0] + " is missing"
		if len(names) > 1 {
			what = "the required parameters " + strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1] + " are missing"
		}
		if len(parts) == 0 {
			what = e.Tool + ": " + what
		}
		parts = append(parts, what)
	}
	if e.Problem != "" {
		if len(parts) == 0 {
			parts = append(parts, e.Tool+": "+e.Problem)
		} else {
			parts = append(parts, e.Problem)
		}
	}
	return strings.Join(parts, "; ") + "; it takes " + e.Takes
}

// argChecker is a tool's input schema resolved for validation, built on
// first use and kept with the tool's definition (once per definition, not
// per call).
type argChecker struct {
	resolved *jsonschema.Resolved // nil: the schema is not checked
}

// CheckArguments validates args (the JSON object a call sends) against the
// entry's input schema. It returns nil when the schema admits them, or when
// the schema cannot be checked faithfully (none, not an object, a draft the
// validator does not know, a remote $ref, OpenAPI's nullable): the backend
// then decides, as before. Otherwise it returns an *ArgumentError.
func (e *Entry) CheckArguments(args json.RawMessage) error {
	td := e.td
	td.argsOnce.Do(func() { td.argCheck.resolved = resolveArgs(td.inRaw) })
	rs := td.argCheck.resolved
	if rs == nil {
		return nil
	}
	var instance any
	if len(bytes.TrimSpace(args)) == 0 {
		args = json.RawMessage("{}")
	}
	if err := json.Unmarshal(args, &instance); err != nil {
		return nil // not JSON: the caller's own error says so
	}
	err := rs.Validate(instance)
	if err == nil {
		return nil
	}
	return e.argumentError(instance, err)
}

// resolveArgs resolves an input schema for validation, or returns nil when
// validating with it could refuse what the backend accepts.
func resolveArgs(raw json.RawMessage) *jsonschema.Resolved {
	if len(raw) == 0 || bytes.Contains(raw, []byte(`"nullable"`)) {
		return nil
	}
	var s jsonschema.Schema
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil
	}
	switch s.Schema {
	case "", "http://json-schema.org/draft-07/schema#", "https://json-schema.org/draft-07/schema#",
		"https://json-schema.org/draft/2020-12/schema":
	default:
		return nil // Validate would refuse every instance
	}
	rs, err := s.Resolve(nil)
	if err != nil {
		return nil
	}
	return rs
}

// argumentError explains why the validator refused instance: the keys the
// top-level schema does not name and the required ones missing (from the
// catalogue's reading of the schema), and whatever else the validator
// said.
func (e *Entry) argumentError(instance any, verr error) *ArgumentError {
	td := e.td
	ae := &ArgumentError{Tool: e.JSName, Takes: td.args}
	obj, ok := instance.(map[string]any)
	if !ok {
		ae.Problem = fmt.Sprintf("expects one object argument, e.g. %s({...})", e.JSName)
		return ae
	}
	if root := td.in.deref(td.in); root != nil {
		named := make(map[string]bool, len(root.Properties))
		for _, p := range root.Properties {
			named[p.Name] = true
		}
		for k := range obj {
			if !named[k] {
				ae.Unknown = append(ae.Unknown, k)
			}
		}
		slices.Sort(ae.Unknown)
		for _, r := range root.Required {
			if _, ok := obj[r]; !ok && !slices.Contains(ae.Missing, r) {
				ae.Missing = append(ae.Missing, r)
			}
		}
		if len(root.PatternProperties) > 0 {
			ae.Unknown = nil // a pattern may name them: the validator says
		}
		ae.Extra = string(bytes.TrimSpace(root.AdditionalProperties)) != "false"
		// Suggestions: the missing required parameters first (x and y for
		// a and b), then the other parameters not given.
		var free []string
		free = append(free, ae.Missing...)
		for _, p := range root.Properties {
			if _, given := obj[p.Name]; !given && !slices.Contains(free, p.Name) {
				free = append(free, p.Name)
			}
		}
		for _, k := range ae.Unknown {
			if s := Closest(k, free); s != "" {
				if ae.Suggestions == nil {
					ae.Suggestions = map[string]string{}
				}
				ae.Suggestions[k] = s
				free = slices.DeleteFunc(free, func(n string) bool { return n == s })
			}
		}
	}
	if p := validatorProblem(verr.Error()); p != "" && !(len(ae.Missing) > 0 && strings.HasPrefix(p, "required:")) &&
		!(len(ae.Unknown) > 0 && strings.HasPrefix(p, "unexpected additional properties")) {
		ae.Problem = p
	}
	if ae.Problem == "" && len(ae.Missing) == 0 && (len(ae.Unknown) == 0 || ae.Extra) {
		// Nothing the keys explain: the validator's own words.
		ae.Problem = validatorProblem(verr.Error())
	}
	return ae
}

var (
	validatingPrefix = regexp.MustCompile(`^validating ([^:]*): `)
	typeProblem      = regexp.MustCompile(`^type: .* has type "(\w+)", want (.+)$`)
	requiredProblem  = regexp.MustCompile(`^required: missing properties: \[(.*)\]$`)
)

// paramPath renders a schema path of the top-level schema as the value it
// validates: /properties/a/properties/b is a.b, /properties/l/items is
// l[].
func paramPath(path string) string {
	segs := strings.Split(strings.TrimPrefix(path, "/"), "/")
	var b strings.Builder
	for i := 0; i < len(segs); i++ {
		switch {
		case segs[i] == "properties" && i+1 < len(segs):
			if b.Len() > 0 {
				b.WriteByte('.')
			}
			b.WriteString(segs[i+1])
			i++
		case segs[i] == "items":
			b.WriteString("[]")
		}
	}
	return b.String()
}

// validatorProblem rewrites a jsonschema-go validation error
// ("validating root: validating /properties/a: type: 1 has type
// \"string\", want \"number\"") for an agent: "`a` must be number, not
// string". The parameter is the deepest schema path of the message.
func validatorProblem(msg string) string {
	param := ""
	for {
		m := validatingPrefix.FindStringSubmatch(msg)
		if m == nil {
			break
		}
		if strings.HasPrefix(m[1], "/properties/") {
			param = paramPath(m[1])
		}
		msg = msg[len(m[0]):]
	}
	if t := typeProblem.FindStringSubmatch(msg); t != nil {
		want := strings.ReplaceAll(strings.Trim(t[2], `"[]`), `" "`, " or ")
		if param == "" {
			return "the argument must be " + want + ", not " + t[1]
		}
		return "`" + param + "` must be " + want + ", not " + t[1]
	}
	if r := requiredProblem.FindStringSubmatch(msg); r != nil && param != "" {
		var names []string
		for _, n := range strings.Fields(r[1]) {
			if u, err := strconv.Unquote(n); err == nil {
				n = u
			}
			names = append(names, "`"+param+"."+n+"`")
		}
		if len(names) == 1 {
			return names[0] + " is missing (required)"
		}
		return strings.Join(names, ", ") + " are missing (required)"
	}
	if param != "" {
		return "`" + param + "`: " + msg
	}
	return msg
}

// CheckArguments validates a call's arguments against the input schema of
// the tool backend.tool (original names), as [Entry.CheckArguments] does;
// nil for a tool the catalogue does not list (the backend decides).
func (c *Catalog) CheckArguments(backend, tool string, args json.RawMessage) error {
	es := c.snap.Load().byName[backend+"."+tool]
	for _, e := range es {
		if e.Backend == backend && e.Tool == tool {
			return e.CheckArguments(args)
		}
	}
	return nil
}
