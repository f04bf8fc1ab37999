package catalog

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// declTool catalogues one tool with raw JSON schemas (keeping their key
// order) and returns its entry.
func declTool(t testing.TB, in, out string) *Entry {
	t.Helper()
	c := New()
	tool := &mcp.Tool{Name: "t", InputSchema: json.RawMessage(in)}
	if out != "" {
		tool.OutputSchema = json.RawMessage(out)
	}
	c.SetBackend("b", nil, []*mcp.Tool{tool})
	e, err := c.Lookup("b.t")
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func TestDeclarationsShapes(t *testing.T) {
	in := `{"type":"object","description":"Search */ things","properties":{
		"query":{"type":"string","description":"what to find\nsecond line"},
		"order":{"enum":["asc","desc"]},
		"limit":{"type":"integer"},
		"filter":{"type":"object","properties":{"tags":{"type":"array","items":{"type":"string"}},"since":{"type":["string","null"]}},"required":["tags"]},
		"points":{"type":"array","items":{"type":"object","properties":{"x":{"type":"number"}}}},
		"pair":{"type":"array","prefixItems":[{"type":"string"},{"type":"number"}]},
		"meta":{"type":"object","additionalProperties":{"type":"number"}},
		"any":{},
		"my-key":{"const":3}
	},"required":["query"]}`
	out := `{"type":"object","properties":{"items":{"type":"array","items":{"$ref":"#/$defs/Item"}}},"$defs":{"Item":{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}}}`
	d := declTool(t, in, out).Declarations("Find", nil)
	for _, want := range []string{
		"/** Search *\\/ things */\ninterface FindInput {\n",
		"  /**\n   * what to find\n   * second line\n   */\n  query: string;\n",
		"  order?: \"asc\" | \"desc\";\n",
		"  limit?: number;\n",
		"  filter?: FindInputFilter;\n",
		"interface FindInputFilter {\n  tags: string[];\n  since?: string | null;\n}\n",
		"  points?: FindInputPointsItem[];\n",
		"interface FindInputPointsItem {\n  x?: number;\n}\n",
		"  pair?: [string, number];\n",
		"  meta?: Record<string, number>;\n",
		"  any?: unknown;\n",
		"  \"my-key\"?: 3;\n",
	} {
		if !strings.Contains(d.Input, want) {
			t.Errorf("input declarations lack %q:\n%s", want, d.Input)
		}
	}
	if d.InputType != "FindInput" || d.ArgsOptional || d.OutputType != "FindOutput" {
		t.Errorf("types: %+v", d)
	}
	for _, want := range []string{"interface FindOutput {\n  items?: Item[];\n}\n", "interface Item {\n  name: string;\n}\n"} {
		if !strings.Contains(d.Output, want) {
			t.Errorf("output declarations lack %q:\n%s", want, d.Output)
		}
	}
	if got := d.Method("find"); got != "find(args: FindInput): Promise<FindOutput>" {
		t.Errorf("method: %s", got)
	}
}

func TestDeclarationsRecursiveRefs(t *testing.T) {
	in := `{"type":"object","properties":{
		"tree":{"$ref":"#/$defs/Node"},
		"self":{"$ref":"#"},
		"loop":{"$ref":"#/$defs/A"},
		"missing":{"$ref":"#/$defs/Nope"},
		"remote":{"$ref":"https://example.com/x.json"}
	},"$defs":{
		"Node":{"type":"object","properties":{"children":{"type":"array","items":{"$ref":"#/$defs/Node"}},"value":{"$ref":"#/$defs/Value"}}},
		"Value":{"anyOf":[{"type":"string"},{"$ref":"#/$defs/Value"}]},
		"A":{"$ref":"#/$defs/B"},"B":{"$ref":"#/$defs/A"}
	}}`
	d := declTool(t, in, "").Declarations("R", nil)
	for _, want := range []string{
		"  tree?: Node;\n", "  self?: RInput;\n", "  loop?: unknown;\n", "  missing?: unknown;\n", "  remote?: unknown;\n",
		"interface Node {\n  children?: Node[];\n  value?: string | unknown;\n}\n",
	} {
		if !strings.Contains(d.Input, want) && !(strings.Contains(want, "value?") && strings.Contains(d.Input, "  value?: unknown;\n")) {
			t.Errorf("declarations lack %q:\n%s", want, d.Input)
		}
	}
	if d.OutputType != "unknown" || d.Output != "" || !d.ArgsOptional {
		t.Errorf("no output schema: %+v", d)
	}
}

func TestDeclarationsNamesAvoidCollisions(t *testing.T) {
	in := `{"type":"object","properties":{"a":{"type":"object","properties":{"x":{"type":"string"}}},"A":{"type":"object","properties":{"y":{"type":"string"}}}}}`
	taken := map[string]bool{"PInput": true}
	d := declTool(t, in, "").Declarations("p", taken)
	if d.InputType != "PInput2" {
		t.Errorf("input type %q, want PInput2 (PInput was taken)", d.InputType)
	}
	if !strings.Contains(d.Input, "interface PInput2A {") || !strings.Contains(d.Input, "interface PInput2A2 {") {
		t.Errorf("colliding nested names not made distinct:\n%s", d.Input)
	}
	if d := declTool(t, `{"type":"object","properties":{"x":{"type":"string"}}}`, "").Declarations("Promise", nil); d.InputType != "PromiseInput" {
		t.Errorf("input type %q", d.InputType)
	}
	if pascal("9 lives") != "T9Lives" || pascal("ünïcode") != "NCode" || pascal("---") != "T" || pascal("get_sum") != "GetSum" {
		t.Errorf("pascal: %q %q %q %q", pascal("9 lives"), pascal("ünïcode"), pascal("---"), pascal("get_sum"))
	}
}

// hostileSchemas are input schemas meant to break a declaration generator.
func hostileSchemas() map[string]string {
	deep := strings.Repeat(`{"type":"object","properties":{"n":`, 100) + `{"type":"string"}` + strings.Repeat(`}}`, 100)
	var wide strings.Builder
	wide.WriteString(`{"type":"object","properties":{`)
	for i := range 600 {
		if i > 0 {
			wide.WriteString(",")
		}
		fmt.Fprintf(&wide, `"p%d":{"type":"object","description":"%s","properties":{"q":{"enum":["%s"]}}}`, i, strings.Repeat("d", 60), strings.Repeat("e", 300))
	}
	wide.WriteString(`}}`)
	// Shared non-object refs: D0 = D1|D1, D1 = D2|D2, … would expand 2^40 times.
	var expo strings.Builder
	expo.WriteString(`{"type":"object","properties":{"x":{"$ref":"#/$defs/D0"}},"$defs":{`)
	for i := range 40 {
		fmt.Fprintf(&expo, `"D%d":{"anyOf":[{"$ref":"#/$defs/D%d"},{"$ref":"#/$defs/D%d"},{"type":"string"}]},`, i, i+1, i+1)
	}
	expo.WriteString(`"D40":{"type":"number"}}}`)
	return map[string]string{
		"deep": deep, "wide": wide.String(), "exponential": expo.String(),
		"names":         `{"type":"object","properties":{"":{"type":"string"},"a b":{"type":"string"},"\"quoted\"":{"type":"string"},"*/ evil":{"type":"string","description":"*/ declare const x: 1; /*"},"line\nbreak":{"type":"string"},"\u2028sep":{"type":"string"},"😀":{"type":"string"},"constructor":{"type":"string"},"__proto__":{"type":"string"},"123":{"type":"number"},"dup":{"type":"string"}},"required":["","a b"]}`,
		"literals":      `{"type":"object","properties":{"e":{"enum":["a\"b","c\\d","\n",1.5e300,-0,true,null]},"o":{"enum":[{"a":1},[1]],"type":"object"},"c":{"const":"*/"},"big":{"const":123456789012345678901234567890}}}`,
		"booleans":      `{"type":"object","properties":{"t":true,"f":false,"items":{"type":"array","items":false},"ap":{"type":"object","additionalProperties":true}}}`,
		"root-ref":      `{"$ref":"#/$defs/Root","$defs":{"Root":{"type":"object","properties":{"next":{"$ref":"#/$defs/Root"}}}}}`,
		"not-object":    `{"type":"array","items":{"type":"string"}}`,
		"garbage":       `{"type":42,"properties":[1,2],"required":"x","enum":{},"items":"y"}`,
		"true":          `true`,
		"anyof-objects": `{"type":"object","properties":{"v":{"oneOf":[{"type":"object","properties":{"kind":{"const":"a"}}},{"type":"object","properties":{"kind":{"const":"b"}}}]},"all":{"allOf":[{"type":"object","properties":{"x":{"type":"string"}}},{"type":"object","properties":{"y":{"type":"number"}}}]}}}`,
	}
}

func TestDeclarationsHostileSchemasBounded(t *testing.T) {
	for name, in := range hostileSchemas() {
		t.Run(name, func(t *testing.T) {
			d := declTool(t, in, in).Declarations("H", nil)
			if n := len(d.Input) + len(d.Output); n > 2*(20*maxDeclBytes) {
				t.Errorf("declarations are %d bytes", n)
			}
			if !strings.Contains(d.Input, d.InputType) {
				t.Errorf("input type %q not declared:\n%s", d.InputType, d.Input)
			}
		})
	}
}

func FuzzDeclarations(f *testing.F) {
	for _, s := range hostileSchemas() {
		if len(s) < 4096 {
			f.Add(s)
		}
	}
	f.Fuzz(func(t *testing.T, in string) {
		if !json.Valid([]byte(in)) {
			return
		}
		e := declTool(t, `{"type":"object"}`, "")
		e.td = buildTool(&mcp.Tool{Name: "t", InputSchema: json.RawMessage(in), OutputSchema: json.RawMessage(in)})
		d := e.Declarations("F", nil)
		if n := len(d.Input) + len(d.Output); n > 2*(20*maxDeclBytes) {
			t.Errorf("declarations are %d bytes", n)
		}
		if strings.Count(d.Input, "{") != strings.Count(d.Input, "}") && !strings.ContainsAny(in, "{}") {
			t.Errorf("unbalanced braces:\n%s", d.Input)
		}
	})
}

// tscPath returns the pinned TypeScript compiler installed by `make deps`.
func tscPath(t *testing.T) string {
	t.Helper()
	p, err := filepath.Abs("../../interop/node_modules/.bin/tsc")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(p); err != nil {
		if os.Getenv("CI") == "" {
			t.Skipf("TypeScript compiler not installed (run `make deps`): %v", err)
		}
		t.Fatal(err)
	}
	return p
}

// typeCheck runs tsc --noEmit --strict over the given files' contents.
func typeCheck(t *testing.T, files map[string]string) {
	t.Helper()
	tsc := tscPath(t)
	dir := t.TempDir()
	args := []string{"--noEmit", "--strict", "--skipLibCheck", "--target", "es2022", "--lib", "es2022"}
	for name, text := range files {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		args = append(args, p)
	}
	out, err := exec.Command(tsc, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("tsc rejected the declarations: %v\n%s", err, out)
	}
}

// TestDeclarationsTypeCheck compiles the hostile catalogue's .d.ts with the
// real TypeScript compiler, together with code that must (and must not)
// type-check against it.
func TestDeclarationsTypeCheck(t *testing.T) {
	c := New()
	var tools []*mcp.Tool
	for name, in := range hostileSchemas() {
		tools = append(tools, &mcp.Tool{Name: name, Description: "hostile */ " + name, InputSchema: json.RawMessage(in), OutputSchema: json.RawMessage(in)})
	}
	c.SetBackend("hostile", nil, tools)
	c.SetBackend("everything", nil, everythingTools())
	c.SetBackend("weird-name.x", nil, []*mcp.Tool{{Name: "delete", InputSchema: json.RawMessage(`{"type":"object","properties":{"id":{"type":"string"}},"required":["id"]}`)}})
	dts, ok := c.TypeScript("")
	if !ok {
		t.Fatal("TypeScript reported no tools")
	}
	use := `async function use() {
  const s: number = (await everything.get_sum({ a: 1, b: 2 })) as number;
  // @ts-expect-error: b is required
  await everything.get_sum({ a: 1 });
  // @ts-expect-error: a must be a number
  await everything.get_sum({ a: "1", b: 2 });
  await weird_name_x.delete_({ id: "x" });
  const r: HostileRootRefInput = { next: { next: {} } };
  return [s, r];
}
`
	typeCheck(t, map[string]string{"catalog.d.ts": dts, "use.ts": use})
	if _, ok := c.TypeScript("nope"); ok {
		t.Error("TypeScript(unknown backend) reported tools")
	}
}

// BenchmarkTypeScript1000Tools measures the .d.ts of a 1 000-tool catalogue.
func BenchmarkTypeScript1000Tools(b *testing.B) {
	c := syntheticCatalog(b, 20)
	b.ResetTimer()
	for b.Loop() {
		if _, ok := c.TypeScript(""); !ok {
			b.Fatal("no tools")
		}
	}
}

// A schema that admits any further property (additionalProperties: true)
// declares an index signature, so that the type checker does not call a
// property it does not name unknown (a false positive of strict mode);
// one that says nothing, or false, stays closed.
func TestDeclarationsOpenObjects(t *testing.T) {
	for in, want := range map[string]string{
		`{"type":"object","properties":{"id":{"type":"string"}},"required":["id"],"additionalProperties":true}`:  "interface PInput {\n  id: string;\n  [key: string]: unknown;\n}\n",
		`{"type":"object","properties":{"id":{"type":"string"}},"required":["id"]}`:                              "interface PInput {\n  id: string;\n}\n",
		`{"type":"object","properties":{"id":{"type":"string"}},"required":["id"],"additionalProperties":false}`: "interface PInput {\n  id: string;\n}\n",
		`{"type":"object","additionalProperties":true}`:                                                          "type PInput = Record<string, unknown>;\n",
		`{"type":"object"}`: "type PInput = Record<string, never>;\n",
	} {
		if d := declTool(t, in, "").Declarations("P", nil); strings.TrimSpace(d.Input) != strings.TrimSpace(want) {
			t.Errorf("%s:\n%s\nwant\n%s", in, d.Input, want)
		}
	}
}
