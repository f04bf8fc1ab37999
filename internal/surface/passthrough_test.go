package surface

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/isogate/isogate/internal/catalog"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func TestPassthroughNames(t *testing.T) {
	c := catalog.New()
	long := strings.Repeat("x", 70)
	c.SetBackend("a", nil, []*mcp.Tool{{Name: "get sum"}, {Name: "get_sum"}, {Name: "b__c"}, {Name: long}, {Name: "ok-1"}})
	c.SetBackend("a__b", nil, []*mcp.Tool{{Name: "c"}})
	c.SetBackend("ü", nil, []*mcp.Tool{{Name: "t"}})
	names := map[string]string{}
	for e, n := range PassthroughNames(c.Entries()) {
		names[e.Name] = n
	}
	want := map[string]string{
		"a.get_sum": "a__get_sum", // the exact name wins
		"a.ok-1":    "a__ok-1",
		"a.b__c":    "a__b__c", // first in backend order
		"ü.t":       "___t",
	}
	for k, v := range want {
		if names[k] != v {
			t.Errorf("%s → %q, want %q", k, names[k], v)
		}
	}
	seen := map[string]bool{}
	for k, n := range names {
		if len(n) > MaxPassthroughName || seen[n] || strings.Trim(n, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-") != "" {
			t.Errorf("%s → %q: not unique, too long or bad characters", k, n)
		}
		seen[n] = true
	}
	for _, k := range []string{"a.get sum", "a__b.c", "a." + long} {
		if !strings.HasPrefix(names[k], "a__") || len(names[k]) > MaxPassthroughName || names[k][len(names[k])-9] != '_' {
			t.Errorf("%s → %q, want a hashed name", k, names[k])
		}
	}
	again := map[string]string{}
	for e, n := range PassthroughNames(c.Entries()) {
		again[e.Name] = n
	}
	if !reflect.DeepEqual(names, again) {
		t.Error("names are not deterministic")
	}
}

func TestClientSafeSchema(t *testing.T) {
	for in, want := range map[string]string{
		`{"type":"object","properties":{"a":true,"b":false,"c":{"type":"object","properties":{"d":true}}}}`: `{"properties":{"a":{},"b":{"not":{}},"c":{"properties":{"d":{}},"type":"object"}},"type":"object"}`,
		`{"properties":{"x":{"type":"number"}}}`:                                                            `{"properties":{"x":{"type":"number"}},"type":"object"}`,
		`{"type":"array"}`:                                                                                  `{"type":"object"}`,
		`true`:                                                                                              `{"type":"object"}`,
		``:                                                                                                  `{"type":"object"}`,
	} {
		if got := string(clientSafeSchema(json.RawMessage(in), true)); got != want {
			t.Errorf("input %s → %s, want %s", in, got, want)
		}
	}
	if got := clientSafeSchema(json.RawMessage(`{"type":"array"}`), false); got != nil {
		t.Errorf("non-object output schema kept: %s", got)
	}
}
