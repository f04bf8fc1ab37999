package catalog

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// deniedCatalog is testCatalog with everything.get-env denied by
// backends.everything.tools.deny, and memory.delete_entities by the allow
// list of memory's.
func deniedCatalog() *Catalog {
	c := testCatalog()
	var tools []*mcp.Tool
	for _, t := range everythingTools() {
		if t.Name != "get-env" {
			tools = append(tools, t)
		}
	}
	c.SetBackendPolicy("everything", []string{"demo"}, tools,
		[]DeniedTool{{Tool: "get-env", Rule: "backends.everything.tools.deny"}})
	c.SetBackendPolicy("memory", nil, []*mcp.Tool{{Name: "create_entities"}},
		[]DeniedTool{{Tool: "delete_entities", Rule: "backends.memory.tools.allow"}})
	return c
}

// TestWhatDenied: every spelling of a denied tool (original, sanitized,
// hyphen for underscore and back, bare) is answered as that tool, denied
// by its rule; never as unknown with a suggestion.
func TestWhatDenied(t *testing.T) {
	c := deniedCatalog()
	for name, want := range map[string]string{
		"everything.get-env":     "everything.get-env is denied by backends.everything.tools.deny",
		"everything.get_env":     "everything.get-env is denied by backends.everything.tools.deny",
		"get-env":                "everything.get-env is denied by backends.everything.tools.deny",
		"get_env":                "everything.get-env is denied by backends.everything.tools.deny",
		"memory.delete_entities": "memory.delete_entities is denied by backends.memory.tools.allow",
		"memory.delete-entities": "memory.delete_entities is denied by backends.memory.tools.allow",
	} {
		_, err := c.Lookup(name)
		var d *DeniedError
		if !errors.As(err, &d) || err.Error() != want {
			t.Errorf("Lookup(%q) = %v, want %q", name, err, want)
		}
	}
	// Denied tools are in no list and never suggested.
	if slices.Contains(c.snap.Load().names, "everything.get-env") {
		t.Error("a denied tool is listed")
	}
	_, err := c.Lookup("memory.delete_entitie")
	var nf *NotFoundError
	if !errors.As(err, &nf) || slices.Contains(nf.Suggestions, "memory.delete_entities") {
		t.Errorf("a near name: %v", err)
	}
	if d := c.Denied(); len(d) != 2 || d[0].Name() != "everything.get-env" {
		t.Errorf("Denied() = %v", d)
	}
}

// TestWhatHyphenUnderscore: an allowed tool is found by either spelling;
// an ambiguous bare name lists its prefixed forms.
func TestWhatHyphenUnderscore(t *testing.T) {
	c := deniedCatalog()
	for _, name := range []string{"calc.add", "everything.get_sum", "everything.get-sum", "get_tiny-image"} {
		if _, err := c.Lookup(name); err != nil {
			t.Errorf("Lookup(%q): %v", name, err)
		}
	}
	c.SetBackend("one", nil, []*mcp.Tool{{Name: "do_it"}})
	c.SetBackend("two", nil, []*mcp.Tool{{Name: "do_it"}})
	_, err := c.Lookup("do-it")
	var amb *AmbiguousError
	if !errors.As(err, &amb) || !slices.Equal(amb.Candidates, []string{"one.do_it", "two.do_it"}) {
		t.Errorf("ambiguous: %v", err)
	}
}

// TestWhatCallerRules: a caller's own rules (server.auth.rules) make an
// allowed tool denied for it, naming the rule, and keep it out of the
// suggestions.
func TestWhatCallerRules(t *testing.T) {
	c := deniedCatalog()
	opts := Options{Suggest: true, DeniedBy: func(b, tool string) string {
		if b == "everything" && tool == "echo" {
			return "server.auth.rules.readers"
		}
		return ""
	}}
	if _, err := c.What("everything.echo", opts); err == nil || err.Error() != "everything.echo is denied by server.auth.rules.readers" {
		t.Errorf("caller-denied: %v", err)
	}
	_, err := c.What("everything.ech", opts)
	if err == nil || strings.Contains(err.Error(), "everything.echo") {
		t.Errorf("suggested a tool denied to the caller: %v", err)
	}
	if _, err := c.What("everything.get-sum", opts); err != nil {
		t.Errorf("allowed: %v", err)
	}
}
