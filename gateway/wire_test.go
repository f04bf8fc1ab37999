package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestToolSchemasAreObjectSchemas: strict clients (the TypeScript SDK)
// reject a tools/list in which any property schema is a boolean; every
// input and output schema must be an object schema all the way down.
func TestToolSchemasAreObjectSchemas(t *testing.T) {
	h := newHarness(t, nil)
	res, err := h.cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range res.Tools {
		for kind, schema := range map[string]any{"inputSchema": tool.InputSchema, "outputSchema": tool.OutputSchema} {
			if schema == nil {
				continue
			}
			raw, _ := json.Marshal(schema)
			var v any
			if err := json.Unmarshal(raw, &v); err != nil {
				t.Fatal(err)
			}
			m, ok := v.(map[string]any)
			if !ok || m["type"] != "object" {
				t.Errorf("%s %s is not an object schema: %s", tool.Name, kind, raw)
				continue
			}
			checkObjectSchemas(t, tool.Name+" "+kind, m)
		}
	}
}

// checkObjectSchemas fails on any boolean sub-schema under properties,
// items, prefixItems or the combinators.
func checkObjectSchemas(t *testing.T, where string, s map[string]any) {
	t.Helper()
	sub := func(path string, v any) {
		m, ok := v.(map[string]any)
		if !ok {
			t.Errorf("%s%s is %v, not an object schema", where, path, v)
			return
		}
		checkObjectSchemas(t, where+path, m)
	}
	if props, ok := s["properties"].(map[string]any); ok {
		for name, p := range props {
			sub(".properties."+name, p)
		}
	}
	if items, ok := s["items"]; ok {
		sub(".items", items)
	}
	for _, key := range []string{"prefixItems", "anyOf", "oneOf", "allOf"} {
		if list, ok := s[key].([]any); ok {
			for i, p := range list {
				sub(fmt.Sprintf(".%s[%d]", key, i), p)
			}
		}
	}
}

// TestAnnotations: the read-only meta-tools say so; call_tool_chain, which
// reaches every backend tool, is destructive and open-world.
func TestAnnotations(t *testing.T) {
	h := newHarness(t, nil)
	res, err := h.cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	seen := 0
	for _, tool := range res.Tools {
		a := tool.Annotations
		switch tool.Name {
		case "search_tools", "tool_info", "list_tools_meta", "read_result":
			seen++
			if a == nil || !a.ReadOnlyHint || !a.IdempotentHint {
				t.Errorf("%s: %+v, want read-only and idempotent", tool.Name, a)
			}
		case "call_tool_chain":
			seen++
			if a == nil || a.ReadOnlyHint || a.DestructiveHint == nil || !*a.DestructiveHint || a.OpenWorldHint == nil || !*a.OpenWorldHint {
				t.Errorf("call_tool_chain: %+v, want destructive and open-world", a)
			}
		}
	}
	if seen != 5 {
		t.Errorf("saw %d of the 5 meta-tools", seen)
	}
}

// TestResultReadErrorCodes: bad result URIs and paths get real JSON-RPC codes.
func TestResultReadErrorCodes(t *testing.T) {
	h := newHarness(t, nil)
	text, isErr := h.chain(t, map[string]any{"code": `return Array.from({length: 300}, (_, i) => ({id: i, name: "item " + i, pad: "x".repeat(50)}))`})
	i := strings.Index(text, "isogate://result/")
	if isErr || i < 0 {
		t.Fatalf("not summarised: %s", text)
	}
	uri := strings.TrimRight(strings.Fields(text[i:])[0], ").,")
	for _, tc := range []struct {
		uri   string
		codes []int64
	}{
		{"isogate://result/nosuchid", []int64{mcp.CodeResourceNotFound}},
		{"isogate://result/nosuchid/0/name", []int64{mcp.CodeResourceNotFound}},
		{uri + "/no_such_key", []int64{jsonrpc.CodeInvalidParams}},
		{uri + "/100000", []int64{jsonrpc.CodeInvalidParams}},
	} {
		_, err := h.cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: tc.uri})
		var e *jsonrpc.Error
		if !errors.As(err, &e) {
			t.Errorf("%s: %v (%T), want a JSON-RPC error", tc.uri, err, err)
			continue
		}
		ok := false
		for _, c := range tc.codes {
			ok = ok || e.Code == c
		}
		if !ok {
			t.Errorf("%s: code %d (%s), want %v", tc.uri, e.Code, e.Message, tc.codes)
		}
	}
}
