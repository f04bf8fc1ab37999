package catalog

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Detail levels for [Catalog.Info].
const (
	// DetailBrief returns name, description, parameters, signature and example.
	DetailBrief = "brief"
	// DetailFull adds the complete input and output schemas and annotations.
	DetailFull = "full"
)

// ErrInvalidDetail is returned (wrapped) by [Catalog.Info] for a detail
// level other than DetailBrief, DetailFull or "".
var ErrInvalidDetail = errors.New("invalid detail level")

// ToolInfo describes one tool's interface for an agent.
type ToolInfo struct {
	// Name is the canonical "backend.tool" name.
	Name string `json:"name"`
	// Backend is the backend's original name.
	Backend string `json:"backend"`
	// Tool is the tool's original name.
	Tool string `json:"tool"`
	// JSName is the expression to call in call_tool_chain code.
	JSName string `json:"jsName"`
	// Title is the tool's display title, if any.
	Title string `json:"title,omitempty"`
	// Description is the full description.
	Description string `json:"description,omitempty"`
	// Signature is a TypeScript-style declaration, e.g.
	// `everything.get_sum(args: { a: number; b: number }): Promise<unknown>`.
	Signature string `json:"signature"`
	// Declarations are TypeScript declarations of the tool: at brief detail
	// the parameter interface (with the named types it uses) and the
	// function signature using it; at full detail the input and output
	// interfaces and the signature using both.
	Declarations string `json:"declarations"`
	// Example is a ready-to-paste call with placeholder arguments.
	Example string `json:"example"`
	// Parameters are the top-level input properties, in schema order.
	Parameters []Param `json:"parameters"`
	// Tags are the tool's and its backend's tags.
	Tags []string `json:"tags,omitempty"`
	// Annotations are the tool's behaviour hints (full detail only).
	Annotations *mcp.ToolAnnotations `json:"annotations,omitempty"`
	// InputSchema is the complete input JSON Schema (full detail only).
	InputSchema json.RawMessage `json:"inputSchema,omitempty"`
	// OutputSchema is the complete output JSON Schema, if the tool declares
	// one (full detail only).
	OutputSchema json.RawMessage `json:"outputSchema,omitempty"`
	// Full records whether the info was produced at DetailFull.
	Full bool `json:"-"`
}

// Param describes one top-level parameter of a tool.
type Param struct {
	// Name is the property name to use in the argument object.
	Name string `json:"name"`
	// Type is the TypeScript-style type, e.g. "number", "string[]",
	// `"asc" | "desc"` or "{ path: string }".
	Type string `json:"type"`
	// Required reports whether the parameter must be given.
	Required bool `json:"required"`
	// Description is the parameter's description (or title).
	Description string `json:"description,omitempty"`
	// Enum lists the allowed values, if restricted.
	Enum []any `json:"enum,omitempty"`
	// Default is the schema's default value as JSON, if any.
	Default json.RawMessage `json:"default,omitempty"`
}

// Info describes the named tool (any form [Catalog.Lookup] accepts) at the
// given detail level: DetailBrief (also used for "") or DetailFull. Errors
// are those of Lookup, or ErrInvalidDetail.
func (c *Catalog) Info(name, detail string) (*ToolInfo, error) {
	return c.InfoFor(name, detail, nil)
}

// InfoFor is Info for a caller whose own rules (server.auth.rules) may
// deny tools the catalogue offers (deniedBy, as [Options.DeniedBy]): a
// denied name, by the configuration or by those rules, is a *DeniedError
// naming the rule.
func (c *Catalog) InfoFor(name, detail string, deniedBy func(backend, tool string) string) (*ToolInfo, error) {
	switch strings.ToLower(strings.TrimSpace(detail)) {
	case "", DetailBrief:
		detail = DetailBrief
	case DetailFull:
		detail = DetailFull
	default:
		return nil, fmt.Errorf("%w %q: use %q or %q", ErrInvalidDetail, detail, DetailBrief, DetailFull)
	}
	e, err := c.What(name, Options{Suggest: true, DeniedBy: deniedBy})
	if err != nil {
		return nil, err
	}
	td := e.td
	info := &ToolInfo{
		Name:        e.Name,
		Backend:     e.Backend,
		Tool:        e.Tool,
		JSName:      e.JSName,
		Title:       displayTitle(td.def),
		Description: strings.TrimSpace(td.def.Description),
		Signature:   e.Signature(),
		Example:     e.Example(),
		Parameters:  cloneParams(td.params),
		Tags:        slices.Clone(e.Tags),
	}
	if detail == DetailFull {
		info.Declarations = e.TypeScript()
	} else {
		// The parameter interface, and the result type inline.
		e.TypeScript()
		brief := *td.decls
		brief.OutputType = td.result
		info.Declarations = brief.Input + e.JSBackend + "." + brief.Method(e.JSTool) + "\n"
	}
	if detail == DetailFull {
		info.Full = true
		info.Annotations = td.def.Annotations
		info.InputSchema = slices.Clone(td.inRaw)
		info.OutputSchema = slices.Clone(td.outRaw)
	}
	return info, nil
}

// Signature returns the TypeScript-style declaration of the entry's code-mode
// function: optional parameters are marked '?', arrays render as T[], enums
// as literal unions, nested objects inline, and the result is the output
// schema's type or unknown. The argument object itself is optional ("args?")
// when no parameter is required.
func (e *Entry) Signature() string {
	td := e.td
	q := ""
	if td.argsOpt {
		q = "?"
	}
	return e.JSName + "(args" + q + ": " + td.args + "): Promise<" + td.result + ">"
}

// Example returns a ready-to-paste call_tool_chain statement for the entry
// with placeholder values for its required parameters, e.g.
// `await everything.get_sum({ a: 0, b: 0 })`. Placeholders are the
// parameter's default, const or first enum value if it has one, else "…"
// for strings, 0 for numbers, false, [], {} or null by type.
func (e *Entry) Example() string {
	return "await " + e.JSName + "(" + e.td.example + ")"
}

func cloneParams(ps []Param) []Param {
	out := make([]Param, len(ps))
	for i, p := range ps {
		p.Enum = slices.Clone(p.Enum)
		p.Default = slices.Clone(p.Default)
		out[i] = p
	}
	return out
}
