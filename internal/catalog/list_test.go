package catalog

import (
	"encoding/base64"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// bulkCatalog has 120 tools over two backends.
func bulkCatalog() *Catalog {
	c := New()
	for b, n := range map[string]int{"alpha": 70, "beta": 50} {
		tools := make([]*mcp.Tool, n)
		for i := range tools {
			tools[i] = &mcp.Tool{Name: fmt.Sprintf("tool-%03d", i), Description: "Bulk tool."}
		}
		c.SetBackend(b, nil, tools)
	}
	return c
}

func TestListPagination(t *testing.T) {
	c := bulkCatalog()
	if c.Count() != 120 {
		t.Fatalf("count = %d", c.Count())
	}
	var all []string
	cursor := ""
	var sizes []int
	for {
		page, next, err := c.List(cursor, 50)
		if err != nil {
			t.Fatal(err)
		}
		sizes = append(sizes, len(page))
		all = append(all, page...)
		if next == "" {
			break
		}
		cursor = next
		if len(sizes) > 10 {
			t.Fatal("pagination does not terminate")
		}
	}
	if !slices.Equal(sizes, []int{50, 50, 20}) {
		t.Errorf("page sizes = %v", sizes)
	}
	if len(all) != 120 || !slices.IsSorted(all) || len(slices.Compact(slices.Clone(all))) != 120 {
		t.Errorf("listing not 120 sorted distinct names: %d", len(all))
	}
	if all[0] != "alpha.tool-000" || all[69] != "alpha.tool-069" || all[70] != "beta.tool-000" || all[119] != "beta.tool-049" {
		t.Errorf("unexpected order: %s %s %s %s", all[0], all[69], all[70], all[119])
	}
}

func TestListPageSizes(t *testing.T) {
	c := bulkCatalog()
	page, next, err := c.List("", 0)
	if err != nil || len(page) != DefaultPageSize || next == "" {
		t.Errorf("default page: %d names, next %q, err %v", len(page), next, err)
	}
	page, next, err = c.List("", 10_000)
	if err != nil || len(page) != 120 || next != "" {
		t.Errorf("capped page: %d names, next %q, err %v", len(page), next, err)
	}
	page, next, err = c.List("", 120)
	if err != nil || len(page) != 120 || next != "" {
		t.Errorf("exact page: %d names, next %q, err %v", len(page), next, err)
	}
	page, next, err = New().List("", 10)
	if err != nil || len(page) != 0 || page == nil || next != "" {
		t.Errorf("empty catalogue: %v %q %v", page, next, err)
	}
}

func TestListInvalidCursor(t *testing.T) {
	c := bulkCatalog()
	for _, cur := range []string{
		"!!!not base64!!!",
		base64.RawURLEncoding.EncodeToString([]byte("alpha.tool-010")), // base64, but not ours
		"YWJj",
	} {
		if _, _, err := c.List(cur, 10); !errors.Is(err, ErrInvalidCursor) {
			t.Errorf("List(%q) err = %v, want ErrInvalidCursor", cur, err)
		}
	}
}

func TestListCursorSurvivesChanges(t *testing.T) {
	c := bulkCatalog()
	first, next, _ := c.List("", 10)
	// The last name of the page disappears, and an earlier one is added.
	tools := make([]*mcp.Tool, 0, 70)
	for i := range 70 {
		if i != 9 {
			tools = append(tools, &mcp.Tool{Name: fmt.Sprintf("tool-%03d", i)})
		}
	}
	tools = append(tools, &mcp.Tool{Name: "tool-000a"})
	c.SetBackend("alpha", nil, tools)
	second, _, err := c.List(next, 3)
	if err != nil {
		t.Fatal(err)
	}
	if first[9] != "alpha.tool-009" || !slices.Equal(second, []string{"alpha.tool-010", "alpha.tool-011", "alpha.tool-012"}) {
		t.Errorf("first page ends %s, second page %v", first[9], second)
	}
}
