package catalog

import (
	"strings"
	"testing"

	"github.com/isogate/isogate/internal/jssyntax"
)

func TestJSIdent(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"my-backend", "my_backend"},
		{"123start", "_123start"},
		{"has.dots", "has_dots"},
		{"get-sum", "get_sum"},
		{"already_fine", "already_fine"},
		{"camelCase", "camelCase"},
		{"$dollar", "$dollar"},
		{"a b/c:d@e", "a_b_c_d_e"},
		{"-lead", "_lead"},
		{"", "_"},
		// Reserved words, keywords, literals and strict-mode names.
		{"delete", "delete_"},
		{"class", "class_"},
		{"new", "new_"},
		{"default", "default_"},
		{"null", "null_"},
		{"true", "true_"},
		{"let", "let_"},
		{"await", "await_"},
		{"eval", "eval_"},
		{"arguments", "arguments_"},
		{"undefined", "undefined_"},
		{"Delete", "Delete"}, // identifiers are case-sensitive
		{"delete-all", "delete_all"},
		// Unicode: letters are valid identifier characters.
		{"café", "café"},
		{"日本語ツール", "日本語ツール"},
		{"привет-мир", "привет_мир"},
		{"emoji🙂tool", "emoji_tool"},
		{"٣items", "_٣items"},                // Arabic-Indic digit cannot start
		{"e\u0301t\u00e9", "e\u0301t\u00e9"}, // combining mark continues
		{"\u0301x", "_\u0301x"},              // but cannot start
	} {
		got := JSIdent(tc.in)
		if got != tc.want {
			t.Errorf("JSIdent(%q) = %q, want %q", tc.in, got, tc.want)
		}
		if !isIdentName(got) || reservedWord(got) {
			t.Errorf("JSIdent(%q) = %q is not a usable identifier", tc.in, got)
		}
	}
}

func TestAssignIdentsCollisions(t *testing.T) {
	got := assignIdents([]string{"get-sum", "get_sum", "get.sum", "get_sum_2"})
	want := map[string]string{
		"get_sum":   "get_sum",   // already an identifier: keeps it
		"get_sum_2": "get_sum_2", // ditto, even though it looks like a suffix
		"get-sum":   "get_sum_3", // sorted: "get-sum" < "get.sum"
		"get.sum":   "get_sum_4",
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%q → %q, want %q (all: %v)", k, got[k], v, got)
		}
	}
	// Stable regardless of input order.
	again := assignIdents([]string{"get_sum_2", "get.sum", "get_sum", "get-sum"})
	for k, v := range got {
		if again[k] != v {
			t.Errorf("order-dependent: %q → %q then %q", k, v, again[k])
		}
	}
}

func TestSanitizedNamesInCatalog(t *testing.T) {
	c := testCatalog()
	c.SetBackend("my_backend", nil, oddTools()[:1]) // collides with my-backend
	byName := map[string]*Entry{}
	seen := map[string]string{}
	for _, e := range c.Entries() {
		byName[e.Name] = e
		if other, dup := seen[e.JSName]; dup {
			t.Errorf("JS name %q used by %s and %s", e.JSName, other, e.Name)
		}
		seen[e.JSName] = e.Name
		if e.JSName != e.JSBackend+"."+e.JSTool || strings.Count(e.JSName, ".") != 1 {
			t.Errorf("%s: bad JSName %q", e.Name, e.JSName)
		}
	}
	for name, js := range map[string]string{
		"everything.get-sum":  "everything.get_sum",
		"fs-server.read_file": "fs_server.read_file",
		"my-backend.has_dots": "my_backend_2.has_dots",
		"my-backend.has.dots": "my_backend_2.has_dots_2",
		"my-backend.123start": "my_backend_2._123start",
		"my-backend.delete":   "my_backend_2.delete_",
		"my_backend.has.dots": "my_backend.has_dots",
	} {
		e := byName[name]
		if e == nil {
			t.Errorf("%s missing", name)
			continue
		}
		if e.JSName != js {
			t.Errorf("%s: JSName %q, want %q", name, e.JSName, js)
		}
	}
	e := byName["my-backend.has.dots"]
	if e.Backend != "my-backend" || e.Tool != "has.dots" || e.JSBackend != "my_backend_2" || e.JSTool != "has_dots_2" {
		t.Errorf("entry fields: %+v", e)
	}
}

// isIdentName reports whether s is an identifier name by the Unicode rules
// JSIdent follows.
func isIdentName(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		if (i == 0 && !jssyntax.IsIDStart(r)) || !jssyntax.IsIDPart(r) {
			return false
		}
	}
	return true
}
