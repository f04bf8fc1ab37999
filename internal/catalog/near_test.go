package catalog

import (
	"slices"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestSearchComputingSynonymsBelowExactWords: a query word meets a tool
// through FOLDOC's synonyms (lexicon.Near: "folder" and "directory", which
// WordNet does not relate), below a tool that says the word itself, and is
// then neither unmatched nor corrected.
func TestSearchComputingSynonymsBelowExactWords(t *testing.T) {
	c := New()
	c.SetBackend("fs", nil, []*mcp.Tool{
		{Name: "list_directory", Description: "List the entries of a directory."},
		{Name: "read_file", Description: "Read a file."},
	})
	c.SetBackend("mac", nil, []*mcp.Tool{{Name: "open_folder", Description: "Open a folder in the Finder."}})
	r := c.Search("folder", SearchOptions{})
	if want := []string{"mac.open_folder", "fs.list_directory"}; !slices.Equal(hitNames(r), want) {
		t.Errorf("folder: hits %v, want %v (the exact word first)", hitNames(r), want)
	}
	c.SetBackend("mac", nil, nil)
	r = c.Search("folder", SearchOptions{})
	if len(r.Hits) != 1 || len(r.Unmatched) != 0 || len(r.Corrections) != 0 {
		t.Errorf("folder, no tool saying it: hits %v unmatched %v corrections %v, want fs.list_directory through the synonym alone",
			hitNames(r), r.Unmatched, r.Corrections)
	}
	r = c.Search("list a folder", SearchOptions{})
	if len(r.Hits) == 0 || r.Hits[0].Name != "fs.list_directory" {
		t.Errorf("list a folder: hits %v, want fs.list_directory first", hitNames(r))
	}
}
