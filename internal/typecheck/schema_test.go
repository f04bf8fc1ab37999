package typecheck

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/isogate/isogate/internal/catalog"
)

// declarationsFor renders one tool (backend b, tool t) with the input
// schema in as code mode declares it to the checker.
func declarationsFor(t *testing.T, in string) Declarations {
	t.Helper()
	c := catalog.New()
	c.SetBackend("b", nil, []*mcp.Tool{{Name: "t", InputSchema: json.RawMessage(in)}})
	e, err := c.Lookup("b.t")
	if err != nil {
		t.Fatal(err)
	}
	d := e.Declarations(e.DeclarationPrefix(), map[string]bool{})
	return Declarations{ID: "schema:" + in, Text: d.Input + d.Output +
		"interface IsogateBackend_0 {\n  t(args: " + d.InputType + "): Promise<any>;\n}\ndeclare var b: IsogateBackend_0;\n"}
}

// A parameter the schema does not name is a certain mistake only where
// the schema does not admit more (additionalProperties: true admits
// any: strict refused such valid calls before the catalogue declared an
// index signature for them).
func TestUnknownParameterAgainstOpenSchemas(t *testing.T) {
	cases := []struct {
		name, schema, program string
		certain               bool
	}{
		{"open, with properties", `{"type":"object","properties":{"id":{"type":"string"}},"required":["id"],"additionalProperties":true}`,
			"await b.t({id: 'a', extra: 1})", false},
		{"open, no properties", `{"type":"object","additionalProperties":true}`, "await b.t({anything: 1})", false},
		{"open, a required parameter missing", `{"type":"object","properties":{"id":{"type":"string"}},"required":["id"],"additionalProperties":true}`,
			"await b.t({ident: 'a'})", true},
		{"closed", `{"type":"object","properties":{"id":{"type":"string"}},"required":["id"],"additionalProperties":false}`,
			"await b.t({id: 'a', extra: 1})", true},
		{"silent", `{"type":"object","properties":{"id":{"type":"string"}},"required":["id"]}`,
			"await b.t({id: 'a', extra: 1})", true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rep, err := testChecker.Check(context.Background(), declarationsFor(t, tc.schema), tc.program, false)
			if err != nil {
				t.Fatal(err)
			}
			if got := len(rep.Certain()) > 0; got != tc.certain {
				t.Errorf("certain = %v, want %v: %+v", got, tc.certain, rep.Diagnostics)
			}
		})
	}
}
