package catalog

import (
	"testing"
)

// TestSearchCatalogueAbbreviations: a clipped word the catalogue uses
// beside its long form ("repo", "repository") and the initials of a term it
// repeats ("PR", "MR": pull request, merge request) find the tools named
// with the long form, though no dictionary links them.
func TestSearchCatalogueAbbreviations(t *testing.T) {
	c, _ := loadSearchBench(t)
	for _, tc := range []struct{ query, first string }{
		{"start a new repo on github", "github.create_repository"},
		{"bring my PR branch up to date", "github.update_pull_request_branch"},
		{"open an MR on gitlab", "gitlab.create_merge_request"},
	} {
		r := c.Search(tc.query, SearchOptions{Limit: 3})
		if names := hitNames(r); len(names) == 0 || names[0] != tc.first {
			t.Errorf("%q: hits %v, want %s first", tc.query, names, tc.first)
		}
		if len(r.Unmatched) > 0 || len(r.Corrections) > 0 {
			t.Errorf("%q: unmatched %v, corrections %v: the abbreviation is a word of the catalogue", tc.query, r.Unmatched, r.Corrections)
		}
	}
}
