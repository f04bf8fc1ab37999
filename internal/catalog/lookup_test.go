package catalog

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
)

func TestLookupForms(t *testing.T) {
	c := testCatalog()
	for in, want := range map[string]string{
		"everything.get-sum":       "everything.get-sum", // canonical
		"everything.get_sum":       "everything.get-sum", // sanitized
		"get-sum":                  "everything.get-sum", // unique bare name
		"get_sum":                  "everything.get-sum", // unique bare sanitized name
		"fs_server.list_directory": "fs-server.list_directory",
		"my-backend.has.dots":      "my-backend.has.dots", // dots inside the tool name
		"my_backend.has_dots":      "my-backend.has_dots",
		"my_backend.has_dots_2":    "my-backend.has.dots",
		"delete_":                  "my-backend.delete",
		"_123start":                "my-backend.123start",
	} {
		e, err := c.Lookup(in)
		if err != nil {
			t.Errorf("Lookup(%q): %v", in, err)
			continue
		}
		if e.Name != want {
			t.Errorf("Lookup(%q) = %s, want %s", in, e.Name, want)
		}
	}
	e, _ := c.Lookup("get-sum")
	if e.Def == nil || e.Def.Description != "Returns the sum of two numbers" {
		t.Errorf("Def = %+v", e.Def)
	}
	if raw, ok := e.Def.InputSchema.(json.RawMessage); !ok || !json.Valid(raw) {
		t.Errorf("Def.InputSchema = %T, want valid json.RawMessage", e.Def.InputSchema)
	}
}

func TestLookupAmbiguous(t *testing.T) {
	c := testCatalog()
	_, err := c.Lookup("echo")
	var amb *AmbiguousError
	if !errors.As(err, &amb) {
		t.Fatalf("Lookup(echo) err = %v, want *AmbiguousError", err)
	}
	if want := []string{"calc.echo", "everything.echo"}; !slices.Equal(amb.Candidates, want) {
		t.Errorf("candidates = %v, want %v", amb.Candidates, want)
	}
	if !strings.Contains(err.Error(), "calc.echo, everything.echo") {
		t.Errorf("message %q lacks candidates", err)
	}
	// Qualified names are never ambiguous, and removing a backend resolves it.
	if e, err := c.Lookup("calc.echo"); err != nil || e.Backend != "calc" {
		t.Errorf("calc.echo: %v %v", e, err)
	}
	c.RemoveBackend("calc")
	if e, err := c.Lookup("echo"); err != nil || e.Name != "everything.echo" {
		t.Errorf("after removal: %v %v", e, err)
	}
}

func TestLookupSuggestions(t *testing.T) {
	c := testCatalog()
	for in, first := range map[string]string{
		"everything.get-summ": "everything.get-sum", // typo in tool part
		"everthing.get-sum":   "everything.get-sum", // typo in backend
		"get-summ":            "everything.get-sum", // bare typo
		"sum":                 "everything.get-sum", // a word of the tool name
		"readfile":            "fs-server.read_file",
		"EVERYTHING.GET-SUM":  "everything.get-sum", // wrong case
	} {
		_, err := c.Lookup(in)
		var nf *NotFoundError
		if !errors.As(err, &nf) {
			t.Errorf("Lookup(%q) err = %v, want *NotFoundError", in, err)
			continue
		}
		if len(nf.Suggestions) == 0 || nf.Suggestions[0] != first {
			t.Errorf("Lookup(%q) suggestions = %v, want %s first", in, nf.Suggestions, first)
		}
		if len(nf.Suggestions) > maxSuggestions {
			t.Errorf("too many suggestions: %v", nf.Suggestions)
		}
		if !strings.Contains(err.Error(), first) {
			t.Errorf("message %q lacks %s", err, first)
		}
	}
	_, err := c.Lookup("everything.get-summ")
	if nf := err.(*NotFoundError); slices.Contains(nf.Suggestions, "everything.get-env") {
		t.Errorf("unrelated suggestion: %v", nf.Suggestions)
	}
	_, err = c.Lookup("qqqqqqqqqqqq")
	var nf *NotFoundError
	if !errors.As(err, &nf) || len(nf.Suggestions) != 0 {
		t.Errorf("nonsense: %v", err)
	}
	if _, err := c.Lookup(""); !errors.As(err, &nf) {
		t.Errorf("empty name: %v", err)
	}
}

func TestClosest(t *testing.T) {
	tools := []string{"get_sum", "echo", "get_tiny_image"}
	for name, want := range map[string]string{
		"get_summ": "get_sum", "Echo": "echo", "ech": "echo", "get_tiny": "get_tiny_image",
		"zzz": "", "": "", strings.Repeat("get_sum", 10): "",
	} {
		if got := Closest(name, tools); got != want {
			t.Errorf("Closest(%q) = %q, want %q", name, got, want)
		}
	}
}

// TestNotFoundNamesSearchTools: an unknown name with nothing close points
// at the tool that finds tools by its name, search_tools, not at a
// "search" the agent has no tool of (issue 43).
func TestNotFoundNamesSearchTools(t *testing.T) {
	_, err := testCatalog().Lookup("zzqqxxyyww")
	var nf *NotFoundError
	if !errors.As(err, &nf) || len(nf.Suggestions) != 0 || !strings.Contains(err.Error(), "use search_tools to find tools") {
		t.Fatalf("Lookup of a name with nothing close: %v", err)
	}
}
