package catalog

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func TestBackendsSetAndRemove(t *testing.T) {
	c := New()
	if c.Count() != 0 || len(c.Backends()) != 0 || c.Index() != "" {
		t.Fatal("new catalogue not empty")
	}
	v0 := c.Version()
	c.SetBackend("everything", []string{"demo"}, everythingTools())
	c.SetBackend("calc", nil, calcTools())
	if got := c.Backends(); !slices.Equal(got, []string{"calc", "everything"}) {
		t.Errorf("backends = %v", got)
	}
	if c.Count() != len(everythingTools())+len(calcTools()) {
		t.Errorf("count = %d", c.Count())
	}
	if c.Version() == v0 {
		t.Error("version did not change")
	}
	// Replacing a backend drops its old tools.
	c.SetBackend("calc", nil, []*mcp.Tool{{Name: "mul", Description: "Multiplies."}})
	if _, err := c.Lookup("calc.add"); err == nil {
		t.Error("calc.add survived replacement")
	}
	if _, err := c.Lookup("calc.mul"); err != nil {
		t.Error(err)
	}
	if r := c.Search("adds", SearchOptions{}); slices.Contains(hitNames(r), "calc.add") {
		t.Errorf("search still finds replaced tool: %v", hitNames(r))
	}
	v := c.Version()
	c.RemoveBackend("nope")
	if c.Version() != v {
		t.Error("removing unknown backend changed version")
	}
	c.RemoveBackend("calc")
	if got := c.Backends(); !slices.Equal(got, []string{"everything"}) {
		t.Errorf("backends after removal = %v", got)
	}
	if c.Count() != len(everythingTools()) {
		t.Errorf("count after removal = %d", c.Count())
	}
	// A backend with no tools is still a backend; an empty name is ignored.
	c.SetBackend("idle", nil, nil)
	c.SetBackend("", nil, calcTools())
	if got := c.Backends(); !slices.Equal(got, []string{"everything", "idle"}) {
		t.Errorf("backends = %v", got)
	}
}

func TestSetBackendSkipsBadToolsAndCopies(t *testing.T) {
	c := New()
	tools := []*mcp.Tool{
		nil,
		{Name: ""},
		{Name: "dup", Description: "first"},
		{Name: "dup", Description: "second"},
	}
	c.SetBackend("b", nil, tools)
	if c.Count() != 1 {
		t.Fatalf("count = %d", c.Count())
	}
	e, _ := c.Lookup("b.dup")
	if e.Def.Description != "first" {
		t.Errorf("duplicate kept %q", e.Def.Description)
	}
	tools[2].Description = "mutated"
	if e, _ := c.Lookup("b.dup"); e.Def.Description != "first" {
		t.Error("catalogue aliases the caller's tool")
	}
}

func TestIndexAndCount(t *testing.T) {
	c := testCatalog()
	idx := c.Index()
	lines := strings.Split(strings.TrimSuffix(idx, "\n"), "\n")
	if len(lines) != c.Count() {
		t.Errorf("index has %d lines for %d tools", len(lines), c.Count())
	}
	if !slices.Contains(lines, "everything.get-sum — Returns the sum of two numbers") {
		t.Errorf("index lacks get-sum line:\n%s", idx)
	}
	if !slices.Contains(lines, "everything.gzip-file-as-resource — Compresses a single file using gzip compression.") {
		t.Errorf("index summary not first sentence:\n%s", idx)
	}
	if !slices.IsSorted(lines) {
		t.Error("index not sorted")
	}
	entries := c.Entries()
	if len(entries) != c.Count() || entries[0].Name != "calc.add" {
		t.Errorf("entries: %d, first %s", len(entries), entries[0].Name)
	}
}

func TestEntryTags(t *testing.T) {
	c := New()
	c.SetBackend("b", []string{" web ", "Web", "", "api"}, []*mcp.Tool{
		{Name: "t", Meta: mcp.Meta{"tags": []string{"read", "API"}}},
		{Name: "u", Meta: mcp.Meta{"_fastmcp": map[string]any{"tags": []any{"fast", 3}}}},
	})
	t1, _ := c.Lookup("b.t")
	t2, _ := c.Lookup("b.u")
	if !slices.Equal(t1.Tags, []string{"api", "read", "web"}) || !slices.Equal(t2.Tags, []string{"api", "fast", "web"}) {
		t.Errorf("tags: %v %v", t1.Tags, t2.Tags)
	}
	if r := c.Search("", SearchOptions{Tag: "READ"}); r.Total != 1 || r.Hits[0].Name != "b.t" {
		t.Errorf("tag READ: %+v", r)
	}
}

// TestConcurrentUse runs writers and readers together; run with -race.
func TestConcurrentUse(t *testing.T) {
	c := testCatalog()
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 50 {
				name := fmt.Sprintf("dyn%d", w)
				if i%3 == 2 {
					c.RemoveBackend(name)
				} else {
					c.SetBackend(name, []string{"dyn"}, calcTools())
				}
			}
		}()
	}
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 100 {
				if r := c.Search("sum", SearchOptions{}); len(r.Hits) == 0 {
					t.Error("search lost everything.get-sum")
					return
				}
				if _, err := c.Lookup("everything.get-sum"); err != nil {
					t.Error(err)
					return
				}
				if _, err := c.Info("get-sum", DetailFull); err != nil {
					t.Error(err)
					return
				}
				names, _, err := c.List("", 500)
				if err != nil || !slices.IsSorted(names) {
					t.Error("list broken", err)
					return
				}
				_ = c.Index()
				_ = c.Backends()
			}
		}()
	}
	wg.Wait()
	for _, b := range c.Backends() {
		if strings.HasPrefix(b, "dyn") {
			if _, err := c.Lookup(b + ".add"); err != nil {
				t.Errorf("backend %s listed but its tools are missing: %v", b, err)
			}
		}
	}
}
