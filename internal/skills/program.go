package skills

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Program is a saved program as its skill presents it.
type Program struct {
	// Name is the program's name (letters, digits, '_' and '-'); its skill
	// is named after it (see [SkillName]).
	Name string
	// Description says what the program does; it is the skill's
	// description (at most 1 024 characters there, the whole in the body).
	Description string
	// Version is the program's version (name@version).
	Version int
	// Parameters is the JSON Schema of the program's arguments; empty: it
	// takes none.
	Parameters json.RawMessage
	// Code is the program's source.
	Code string
	// Tool is the name clients call the program by in tools/list.
	Tool string
}

// ProgramSource is the name of a program skill's source file.
const ProgramSource = "program.ts"

// maxDescription bounds an Agent Skills description, in characters.
const maxDescription = 1024

// SkillName is the skill name of a program name: lower case, '_' as '-'
// (Agent Skills names are lower-case letters, digits and single hyphens).
func SkillName(program string) (string, error) {
	name := strings.ReplaceAll(strings.ToLower(program), "_", "-")
	if !ValidName(name) {
		return "", fmt.Errorf("program name %q gives no valid skill name (%q: lower-case letters, digits, single hyphens, at most 64)", program, name)
	}
	return name, nil
}

// ProgramSkill renders a saved program as a skill at programs/<skill name>:
// a SKILL.md (frontmatter name and description; a body that says when to
// use it, its parameters and how to call it) and the program's source.
func ProgramSkill(p Program) (Skill, error) {
	name, err := SkillName(p.Name)
	if err != nil {
		return Skill{}, err
	}
	desc := strings.TrimSpace(p.Description)
	if desc == "" {
		return Skill{}, fmt.Errorf("program %q has no description", p.Name)
	}
	params, err := parseParameters(p.Parameters)
	if err != nil {
		return Skill{}, fmt.Errorf("program %q: %w", p.Name, err)
	}
	short := desc
	if r := []rune(short); len(r) > maxDescription {
		short = string(r[:maxDescription-1]) + "…"
	}
	fm, err := yaml.Marshal(struct {
		Name        string            `yaml:"name"`
		Description string            `yaml:"description"`
		Metadata    map[string]string `yaml:"metadata"`
	}{name, short, map[string]string{"program": p.Name, "version": strconv.Itoa(p.Version), "tool": p.Tool}})
	if err != nil {
		return Skill{}, fmt.Errorf("program %q: frontmatter: %w", p.Name, err)
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "---\n%s---\n\n# %s\n\n%s\n\n", fm, name, desc)
	fmt.Fprintf(&b, "## When to use it\n\nWhen a task is what the description above says. It is a saved isogate program "+
		"(`%s@%d`) that already worked: call it rather than writing the program again. It runs under your own "+
		"principal with the gateway's policy, approvals and limits, like any program, and its source is "+
		"[%s](%s), beside this file.\n\n", p.Name, p.Version, ProgramSource, ProgramSource)
	b.WriteString("## Parameters\n\n")
	if len(params.names) == 0 {
		b.WriteString("None: call it with `{}`.\n\n")
	} else {
		b.WriteString("| name | type | required | description |\n| --- | --- | --- | --- |\n")
		for _, n := range params.names {
			pr := params.props[n]
			req := "no"
			if params.required[n] {
				req = "yes"
			}
			fmt.Fprintf(&b, "| `%s` | %s | %s | %s |\n", n, cell(pr.typeName()), req, cell(pr.Description))
		}
		fmt.Fprintf(&b, "\nIts arguments' JSON Schema:\n\n```json\n%s\n```\n\n", params.indented)
	}
	example := params.example()
	fmt.Fprintf(&b, "## How to call it\n\n- As a tool: `tools/call` of `%s` with arguments such as `%s`.\n"+
		"- Inside a `call_tool_chain` program: `await programs.%s(%s)`.\n", p.Tool, example, p.Name, example)
	return Skill{
		Path: "programs/" + name,
		Files: []File{
			{Path: SkillFile, MIMEType: "text/markdown", Content: b.Bytes()},
			{Path: ProgramSource, MIMEType: "text/typescript", Content: []byte(p.Code)},
		},
	}, nil
}

// parameters are a program's parameters as its SKILL.md shows them.
type parameters struct {
	names    []string // required first, then by name
	props    map[string]property
	required map[string]bool
	indented string // the schema, indented
}

type property struct {
	Type        any    `json:"type"`
	Description string `json:"description"`
}

// typeName is the property's JSON Schema type as text ("string",
// "string | null"), "any" when it has none.
func (p property) typeName() string {
	switch t := p.Type.(type) {
	case string:
		return t
	case []any:
		var parts []string
		for _, x := range t {
			parts = append(parts, fmt.Sprint(x))
		}
		return strings.Join(parts, " | ")
	}
	return "any"
}

// parseParameters reads a JSON Schema of an object's properties.
func parseParameters(schema json.RawMessage) (parameters, error) {
	out := parameters{props: map[string]property{}, required: map[string]bool{}}
	if len(bytes.TrimSpace(schema)) == 0 {
		return out, nil
	}
	var s struct {
		Properties map[string]property `json:"properties"`
		Required   []string            `json:"required"`
	}
	if err := json.Unmarshal(schema, &s); err != nil {
		return out, fmt.Errorf("parameters are not a JSON Schema object: %w", err)
	}
	var ind bytes.Buffer
	if err := json.Indent(&ind, schema, "", "  "); err != nil {
		return out, fmt.Errorf("parameters: %w", err)
	}
	out.indented = ind.String()
	for n, p := range s.Properties {
		out.props[n] = p
		out.names = append(out.names, n)
	}
	for _, n := range s.Required {
		out.required[n] = true
	}
	sort.Slice(out.names, func(i, j int) bool {
		a, b := out.names[i], out.names[j]
		if out.required[a] != out.required[b] {
			return out.required[a]
		}
		return a < b
	})
	return out, nil
}

// example is a call's arguments with a placeholder for each required
// parameter.
func (p parameters) example() string {
	var parts []string
	for _, n := range p.names {
		if !p.required[n] {
			continue
		}
		v := `"…"`
		switch strings.SplitN(p.props[n].typeName(), " ", 2)[0] {
		case "number", "integer":
			v = "0"
		case "boolean":
			v = "false"
		case "array":
			v = "[]"
		case "object":
			v = "{}"
		}
		k, _ := json.Marshal(n)
		parts = append(parts, string(k)+": "+v)
	}
	if len(parts) == 0 {
		return "{}"
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

// cell makes text fit one cell of a Markdown table.
func cell(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	return strings.ReplaceAll(s, "|", `\|`)
}
