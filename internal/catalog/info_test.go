package catalog

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// richSchema exercises optional, array, enum, nested, $ref, nullable,
// unions, records and quoted keys; as raw JSON its property order is kept.
const richSchema = `{
  "type": "object",
  "properties": {
    "query":  {"type": "string", "description": "Search query"},
    "tags":   {"type": "array", "items": {"type": "string"}},
    "order":  {"type": "string", "enum": ["asc", "desc"], "default": "asc"},
    "filter": {"type": "object", "properties": {
                 "owner": {"type": "string"},
                 "state": {"$ref": "#/$defs/State"}},
               "required": ["owner"]},
    "limit":  {"type": ["integer", "null"]},
    "mode":   {"anyOf": [{"type": "string"}, {"type": "number"}]},
    "mixed":  {"type": "array", "items": {"anyOf": [{"type": "string"}, {"type": "number"}]}},
    "meta":   {"type": "object", "additionalProperties": {"type": "string"}},
    "my-key": {"type": "boolean"},
    "state":  {"$ref": "#/$defs/State", "description": "Issue state"}
  },
  "required": ["query", "filter", "state"],
  "$defs": {"State": {"type": "string", "enum": ["open", "closed"], "description": "State of an issue"}}
}`

func richCatalog() *Catalog {
	c := testCatalog()
	c.SetBackend("tracker", nil, []*mcp.Tool{
		{Name: "find-issues", Description: "Find issues.", InputSchema: json.RawMessage(richSchema)},
		{Name: "tree", Description: "Walk a recursive tree.", InputSchema: json.RawMessage(`{
			"type": "object",
			"properties": {"root": {"$ref": "#/$defs/Node"}},
			"$defs": {"Node": {"type": "object", "properties": {"name": {"type": "string"}, "children": {"type": "array", "items": {"$ref": "#/$defs/Node"}}}}}}`)},
		{Name: "tuple", Description: "Tuples and consts.", InputSchema: json.RawMessage(`{
			"type": "object",
			"properties": {
				"point": {"type": "array", "prefixItems": [{"type": "number"}, {"type": "number"}]},
				"kind":  {"const": "fixed"},
				"any":   true,
				"level": {"oneOf": [{"const": 1}, {"const": 2}]}},
			"required": ["point", "kind", "level"]}`),
			OutputSchema: json.RawMessage(`{"type": "array", "items": {"type": "object", "properties": {"id": {"type": "integer"}}, "required": ["id"]}}`)},
	})
	return c
}

func TestInfoBrief(t *testing.T) {
	c := testCatalog()
	info, err := c.Info("get-sum", "brief")
	if err != nil {
		t.Fatal(err)
	}
	if want := "everything.get_sum(args: { a: number; b: number }): Promise<unknown>"; info.Signature != want {
		t.Errorf("signature = %q, want %q", info.Signature, want)
	}
	if info.Name != "everything.get-sum" || info.JSName != "everything.get_sum" || info.Title != "Get Sum Tool" ||
		info.Description != "Returns the sum of two numbers" {
		t.Errorf("info = %+v", info)
	}
	want := []Param{
		{Name: "a", Type: "number", Required: true, Description: "First number"},
		{Name: "b", Type: "number", Required: true, Description: "Second number"},
	}
	if len(info.Parameters) != 2 {
		t.Fatalf("parameters = %+v", info.Parameters)
	}
	for i, p := range info.Parameters {
		if p.Name != want[i].Name || p.Type != want[i].Type || p.Required != want[i].Required || p.Description != want[i].Description {
			t.Errorf("param %d = %+v, want %+v", i, p, want[i])
		}
	}
	if info.InputSchema != nil || info.OutputSchema != nil || info.Full {
		t.Errorf("brief info carries schemas")
	}
	if info.Example != "await everything.get_sum({ a: 0, b: 0 })" {
		t.Errorf("example = %q", info.Example)
	}
	// "" means brief; unknown levels are rejected.
	if _, err := c.Info("get-sum", ""); err != nil {
		t.Errorf("detail \"\": %v", err)
	}
	if _, err := c.Info("get-sum", "verbose"); !errors.Is(err, ErrInvalidDetail) {
		t.Errorf("detail verbose: %v", err)
	}
	var nf *NotFoundError
	if _, err := c.Info("get-summ", "brief"); !errors.As(err, &nf) {
		t.Errorf("unknown tool: %v", err)
	}
}

func TestInfoFull(t *testing.T) {
	c := testCatalog()
	info, err := c.Info("everything.get-structured-content", DetailFull)
	if err != nil {
		t.Fatal(err)
	}
	want := `everything.get_structured_content(args: { location: "New York" | "Chicago" | "Los Angeles" }): ` +
		`Promise<{ conditions: string; humidity: number; temperature: number }>`
	if info.Signature != want {
		t.Errorf("signature = %q\nwant        %q", info.Signature, want)
	}
	var in, out map[string]any
	if json.Unmarshal(info.InputSchema, &in) != nil || json.Unmarshal(info.OutputSchema, &out) != nil {
		t.Fatalf("schemas not JSON: %s / %s", info.InputSchema, info.OutputSchema)
	}
	if in["type"] != "object" || out["required"] == nil {
		t.Errorf("schemas = %v / %v", in, out)
	}
	p := info.Parameters[0]
	if !slices.Equal(p.Enum, []any{"New York", "Chicago", "Los Angeles"}) {
		t.Errorf("enum = %v", p.Enum)
	}
	// Info hands out copies: mutating them must not leak into the catalogue.
	info.Parameters[0].Enum[0] = "Paris"
	info.InputSchema[0] = 'X'
	again, _ := c.Info("everything.get-structured-content", DetailFull)
	if again.Parameters[0].Enum[0] != "New York" || again.InputSchema[0] != '{' {
		t.Errorf("catalogue state was mutated through Info result")
	}
	txt := again.Text()
	for _, s := range []string{again.Signature, "- location: ", "(required) — Choose city", "Input schema: {", "Output schema: {"} {
		if !strings.Contains(txt, s) {
			t.Errorf("Text lacks %q:\n%s", s, txt)
		}
	}
}

func TestSignatureRendering(t *testing.T) {
	c := richCatalog()
	for name, want := range map[string]string{
		"tracker.find-issues": `tracker.find_issues(args: { query: string; tags?: string[]; order?: "asc" | "desc"; ` +
			`filter: { owner: string; state?: "open" | "closed" }; limit?: number | null; mode?: string | number; ` +
			`mixed?: (string | number)[]; meta?: Record<string, string>; "my-key"?: boolean; state: "open" | "closed" }): Promise<unknown>`,
		"tracker.tree":  `tracker.tree(args?: { root?: { name?: string; children?: unknown[] } }): Promise<unknown>`,
		"tracker.tuple": `tracker.tuple(args: { point: [number, number]; kind: "fixed"; any?: unknown; level: 1 | 2 }): Promise<{ id: number }[]>`,
		// Optional-only and parameterless tools take an optional argument.
		"everything.trigger-long-running-operation": `everything.trigger_long_running_operation(args?: { duration?: number; steps?: number }): Promise<unknown>`,
		"everything.get-tiny-image":                 `everything.get_tiny_image(args?: {}): Promise<unknown>`,
		"everything.get-env":                        `everything.get_env(args?: {}): Promise<unknown>`,
		"calc.summarize-text":                       `calc.summarize_text(args: { maxSentences?: number; text: string }): Promise<unknown>`,
	} {
		info, err := c.Info(name, DetailBrief)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if info.Signature != want {
			t.Errorf("%s:\n got %s\nwant %s", name, info.Signature, want)
		}
	}
}

func TestParamsAndExamples(t *testing.T) {
	c := richCatalog()
	info, err := c.Info("tracker.find-issues", DetailBrief)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range info.Parameters {
		names = append(names, p.Name)
	}
	if want := []string{"query", "tags", "order", "filter", "limit", "mode", "mixed", "meta", "my-key", "state"}; !slices.Equal(names, want) {
		t.Errorf("param order = %v, want schema order %v", names, want)
	}
	order, state := info.Parameters[2], info.Parameters[9]
	if string(order.Default) != `"asc"` || !slices.Equal(order.Enum, []any{"asc", "desc"}) || order.Required {
		t.Errorf("order = %+v", order)
	}
	if state.Description != "Issue state" || !slices.Equal(state.Enum, []any{"open", "closed"}) || !state.Required {
		t.Errorf("state ($ref) = %+v", state)
	}
	if want := `await tracker.find_issues({ query: "…", filter: {}, state: "open" })`; info.Example != want {
		t.Errorf("example = %s, want %s", info.Example, want)
	}
	for name, want := range map[string]string{
		"tracker.tuple":                    `await tracker.tuple({ point: [], kind: "fixed", level: 1 })`,
		"everything.echo":                  `await everything.echo({ message: "…" })`,
		"everything.get-annotated-message": `await everything.get_annotated_message({ messageType: "error" })`,
		"everything.get-tiny-image":        `await everything.get_tiny_image({})`,
		"fs-server.search_files":           `await fs_server.search_files({ path: "…", pattern: "…" })`,
	} {
		if info, _ := c.Info(name, ""); info.Example != want {
			t.Errorf("%s example = %s, want %s", name, info.Example, want)
		}
	}
	tuple, _ := c.Info("tracker.tuple", "")
	if lv := tuple.Parameters[3]; !slices.Equal(lv.Enum, []any{1.0, 2.0}) || lv.Type != "1 | 2" {
		t.Errorf("oneOf consts: %+v", lv)
	}
}

// Schemas built with github.com/google/jsonschema-go, as Go SDK servers do.
func TestInfoWithJSONSchemaType(t *testing.T) {
	type args struct {
		Path  string  `json:"path" jsonschema:"file to read"`
		Lines []int   `json:"lines,omitempty"`
		Mode  *string `json:"mode,omitempty"`
		Opts  struct {
			Deep bool `json:"deep"`
		} `json:"opts"`
	}
	in, err := jsonschema.For[args](nil)
	if err != nil {
		t.Fatal(err)
	}
	c := New()
	c.SetBackend("go", nil, []*mcp.Tool{{Name: "read", Description: "Read lines.", InputSchema: in}})
	info, err := c.Info("go.read", DetailFull)
	if err != nil {
		t.Fatal(err)
	}
	// jsonschema.For keeps struct field order, marks non-omitempty fields
	// required and pointers nullable.
	want := `go.read(args: { path: string; lines?: number[] | null; mode?: string | null; opts: { deep: boolean } }): Promise<unknown>`
	if info.Signature != want {
		t.Errorf("signature:\n got %s\nwant %s", info.Signature, want)
	}
	if p := info.Parameters[0]; p.Name != "path" || p.Description != "file to read" || !p.Required {
		t.Errorf("params = %+v", info.Parameters)
	}
	if !json.Valid(info.InputSchema) {
		t.Errorf("input schema %s", info.InputSchema)
	}
}

func TestInfoToleratesOddSchemas(t *testing.T) {
	c := New()
	c.SetBackend("odd", nil, []*mcp.Tool{
		{Name: "nil-schema", Description: "No schema at all."},
		{Name: "bad-keywords", InputSchema: json.RawMessage(`{"type":"object","properties":{"x":{"type":"string"}},"required":"x"}`)},
		{Name: "not-object", InputSchema: json.RawMessage(`true`)},
		{Name: "unmarshalable", InputSchema: map[string]any{"f": func() {}}},
	})
	for name, want := range map[string]string{
		"odd.nil-schema":    "odd.nil_schema(args?: Record<string, unknown>): Promise<unknown>",
		"odd.bad-keywords":  "odd.bad_keywords(args?: { x?: string }): Promise<unknown>",
		"odd.not-object":    "odd.not_object(args?: Record<string, unknown>): Promise<unknown>",
		"odd.unmarshalable": "odd.unmarshalable(args?: Record<string, unknown>): Promise<unknown>",
	} {
		info, err := c.Info(name, DetailFull)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if info.Signature != want {
			t.Errorf("%s: signature %s, want %s", name, info.Signature, want)
		}
	}
	if c.Count() != 4 {
		t.Errorf("count = %d", c.Count())
	}
}
