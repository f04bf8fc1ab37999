package catalog

import (
	"fmt"
	"strings"
	"testing"
)

// tsCase is one root schema and what the generator makes of it: the
// inline type (signatures) and the named declarations (tool_info, .d.ts)
// of the schema as a tool's input, or as its output when output is set.
type tsCase struct {
	name, schema string
	output       bool
	inline       string
	named        string
}

// tsCases are the tricky schemas, each rendered in both modes.
var tsCases = []tsCase{
	{
		name:   "boolean sub-schemas",
		schema: `{"type":"object","properties":{"t":true,"f":false,"none":{"type":"array","items":false},"any":{"type":"object","additionalProperties":true}},"required":["f"]}`,
		// items and additionalProperties read boolean schemas as absent.
		inline: `{ t?: unknown; f: never; none?: unknown[]; any?: Record<string, unknown> }`,
		named:  "interface TInput {\n  t?: unknown;\n  f: never;\n  none?: unknown[];\n  any?: Record<string, unknown>;\n}\n",
	},
	{
		name:   "boolean root",
		schema: `true`,
		inline: `Record<string, unknown>`,
		named:  "type TInput = Record<string, unknown>;\n",
	},
	{
		name: "enums and consts",
		schema: `{"type":"object","properties":{"s":{"type":"string","enum":["a","b"]},"m":{"enum":["x",1.5,true,null]},` +
			`"obj":{"type":"string","enum":[{"a":1}]},"big":{"type":"integer","enum":[` + strings.Repeat("1,", 64) + `2]},` +
			`"c":{"const":"*/"},"oc":{"const":{"a":1}},"long":{"const":"` + strings.Repeat("x", 201) + `"}}}`,
		inline: `{ s?: "a" | "b"; m?: "x" | 1.5 | true | null; obj?: string; big?: number; c?: "*/"; oc?: unknown; long?: string }`,
		named:  "interface TInput {\n  s?: \"a\" | \"b\";\n  m?: \"x\" | 1.5 | true | null;\n  obj?: string;\n  big?: number;\n  c?: \"*/\";\n  oc?: unknown;\n  long?: string;\n}\n",
	},
	{
		name: "anyOf, oneOf and allOf",
		schema: `{"type":"object","properties":{"u":{"anyOf":[{"type":"string"},{"type":"null"}]},` +
			`"o":{"oneOf":[{"type":"object","properties":{"k":{"const":"a"}},"required":["k"]},{"type":"array","items":{"anyOf":[{"type":"string"},{"type":"number"}]}}]},` +
			`"a":{"allOf":[{"type":"string"},{"enum":["x","y"]}]},"w":{"anyOf":[{"type":"string"},{}]}}}`,
		inline: `{ u?: string | null; o?: { k: "a" } | (string | number)[]; a?: string & ("x" | "y"); w?: unknown }`,
		named: "interface TInput {\n  u?: string | null;\n  o?: TInputOVariant1 | (string | number)[];\n  a?: string & (\"x\" | \"y\");\n  w?: unknown;\n}\n\n" +
			"interface TInputOVariant1 {\n  k: \"a\";\n}\n",
	},
	{
		name: "$ref",
		schema: `{"type":"object","properties":{"tree":{"$ref":"#/$defs/Node"},"state":{"$ref":"#/definitions/State"},` +
			`"slash":{"$ref":"#/$defs/a~1b"},"self":{"$ref":"#"},"loop":{"$ref":"#/$defs/A"},"missing":{"$ref":"#/$defs/Nope"},"remote":{"$ref":"https://example.com/s.json"}},` +
			`"$defs":{"Node":{"type":"object","properties":{"name":{"type":"string"},"kids":{"type":"array","items":{"$ref":"#/$defs/Node"}}},"required":["name"]},` +
			`"a/b":{"type":"boolean"},"A":{"$ref":"#/$defs/B"},"B":{"$ref":"#/$defs/A"}},` +
			`"definitions":{"State":{"enum":["open","closed"]}}}`,
		inline: `{ tree?: { name: string; kids?: unknown[] }; state?: "open" | "closed"; slash?: boolean; self?: unknown; loop?: unknown; missing?: unknown; remote?: unknown }`,
		named: "interface TInput {\n  tree?: Node;\n  state?: \"open\" | \"closed\";\n  slash?: boolean;\n  self?: TInput;\n  loop?: unknown;\n  missing?: unknown;\n  remote?: unknown;\n}\n\n" +
			"interface Node {\n  name: string;\n  kids?: Node[];\n}\n",
	},
	{
		name:   "root $ref",
		schema: `{"$ref":"#/$defs/R","$defs":{"R":{"type":"object","description":"The root.","properties":{"next":{"$ref":"#/$defs/R"}},"required":["next"]}}}`,
		inline: `{ next: unknown }`,
		named:  "/** The root. */\ninterface TInput {\n  next: TInput;\n}\n",
	},
	{
		name: "nullable",
		schema: `{"type":"object","properties":{"n":{"type":"string","nullable":true},"l":{"type":["integer","null"]},` +
			`"o":{"type":["object","null"],"properties":{"x":{"type":"number"}}},"r":{"$ref":"#/$defs/N"}},` +
			`"$defs":{"N":{"type":"object","nullable":true,"properties":{"y":{"type":"string"}}}}}`,
		inline: `{ n?: string | null; l?: number | null; o?: { x?: number } | null; r?: { y?: string } | null }`,
		named: "interface TInput {\n  n?: string | null;\n  l?: number | null;\n  o?: TInputO | null;\n  r?: N | null;\n}\n\n" +
			"interface TInputO {\n  x?: number;\n}\n\ninterface N {\n  y?: string;\n}\n",
	},
	{
		name: "additionalProperties",
		schema: `{"type":"object","properties":{"closed":{"type":"object","additionalProperties":false},"map":{"type":"object","additionalProperties":{"type":"number"}},` +
			`"mixed":{"type":"object","properties":{"x":{"type":"string"}},"additionalProperties":{"type":"number"}},"open":{"type":"object"}}}`,
		inline: `{ closed?: Record<string, never>; map?: Record<string, number>; mixed?: { x?: string; [key: string]: unknown }; open?: Record<string, unknown> }`,
		named: "interface TInput {\n  closed?: Record<string, never>;\n  map?: Record<string, number>;\n  mixed?: TInputMixed;\n  open?: Record<string, unknown>;\n}\n\n" +
			"interface TInputMixed {\n  x?: string;\n  [key: string]: unknown;\n}\n",
	},
	{
		name:   "no parameters",
		schema: `{"type":"object","additionalProperties":false}`,
		inline: `{}`, // as signatures have always shown it
		named:  "type TInput = Record<string, never>;\n",
	},
	{
		name:   "free-form parameters",
		schema: `{"type":"object","additionalProperties":{"type":"string"}}`,
		inline: `Record<string, string>`,
		named:  "type TInput = Record<string, string>;\n",
	},
	{
		name:   "output without properties",
		schema: `{"type":"object","additionalProperties":false}`,
		output: true,
		inline: `Record<string, never>`,
		named:  "type TOutput = Record<string, never>;\n",
	},
	{
		name:   "output array",
		schema: `{"type":"array","description":"Rows.","items":{"type":"object","properties":{"id":{"type":"integer"}},"required":["id"]}}`,
		output: true,
		inline: `{ id: number }[]`,
		named:  "interface TOutputItem {\n  id: number;\n}\n\n/** Rows. */\ntype TOutput = TOutputItem[];\n",
	},
	{
		name:   "tuples",
		schema: `{"type":"object","properties":{"p":{"type":"array","prefixItems":[{"type":"string"},{"type":"number"}]},"d4":{"type":"array","items":[{"type":"boolean"},{"type":"null"}]}}}`,
		inline: `{ p?: [string, number]; d4?: [boolean, null] }`,
		named:  "interface TInput {\n  p?: [string, number];\n  d4?: [boolean, null];\n}\n",
	},
	{
		name:   "names needing quotes",
		schema: `{"type":"object","properties":{"my-key":{"type":"string"},"123":{"type":"number"},"a b":{"type":"string"},"café":{"type":"string"},"$ok":{"type":"string"},"_x1":{"type":"string"}},"required":["my-key"]}`,
		inline: `{ "my-key": string; "123"?: number; "a b"?: string; "café"?: string; $ok?: string; _x1?: string }`,
		named:  "interface TInput {\n  \"my-key\": string;\n  \"123\"?: number;\n  \"a b\"?: string;\n  \"café\"?: string;\n  $ok?: string;\n  _x1?: string;\n}\n",
	},
	{
		name: "hostile names",
		schema: `{"type":"object","properties":{"":{"type":"string"},"*/ evil":{"type":"string","description":"*/ declare const x: 1; /*"},` +
			`"line\nbreak":{"type":"string"},"\"q\"":{"type":"string"},"bell\u0007":{"type":"string"},"__proto__":{"type":"string"},"constructor":{"type":"string"},"dup":{"type":"string"},"dup":{"type":"number"}}}`,
		inline: `{ ""?: string; "*/ evil"?: string; "line\nbreak"?: string; "\"q\""?: string; "bell\u0007"?: string; __proto__?: string; constructor?: string; dup?: string }`,
		named: "interface TInput {\n  \"\"?: string;\n  /** *\\/ declare const x: 1; /* */\n  \"*/ evil\"?: string;\n  \"line\\nbreak\"?: string;\n  \"\\\"q\\\"\"?: string;\n" +
			"  \"bell\\u0007\"?: string;\n  __proto__?: string;\n  constructor?: string;\n  dup?: string;\n}\n",
	},
}

// generate renders c in both modes.
func (c tsCase) generate() (inline, named string) {
	s := parseSchema([]byte(c.schema))
	inline, _ = newInlineGen(s).rootType("", !c.output)
	g := newNamedGen(s, map[string]bool{})
	if c.output {
		g.declare("TOutput", false)
	} else {
		g.declare("TInput", true)
	}
	return inline, g.String()
}

func TestTypeScriptGenerator(t *testing.T) {
	for _, c := range tsCases {
		t.Run(c.name, func(t *testing.T) {
			inline, named := c.generate()
			if inline != c.inline {
				t.Errorf("inline:\n got %s\nwant %s", inline, c.inline)
			}
			if named != c.named+"\n" {
				t.Errorf("named:\n got %q\nwant %q", named, c.named+"\n")
			}
		})
	}
}

// TestTypeScriptGeneratorTypeChecks compiles every case's output, both
// modes, with the pinned TypeScript compiler.
func TestTypeScriptGeneratorTypeChecks(t *testing.T) {
	files := map[string]string{}
	for i, c := range tsCases {
		inline, named := c.generate()
		files[fmt.Sprintf("case%d.ts", i)] = "export {};\n" + named + "declare const inline: " + inline + ";\n"
	}
	typeCheck(t, files)
}
