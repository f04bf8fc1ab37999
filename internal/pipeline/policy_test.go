package pipeline

import (
	"testing"

	"github.com/isogate/isogate/config"
)

func TestPolicyDecide(t *testing.T) {
	p := NewPolicy(map[string]config.Backend{
		"filesystem": {Tools: config.ToolPolicy{
			Allow:   []string{"read_*", "list_*", "search_files", "write_file"},
			Deny:    []string{"write_file"},
			Approve: []string{"move_file", "edit_file"},
		}},
		"open": {},
	})
	cases := []struct {
		backend, tool string
		want          Decision
	}{
		{"filesystem", "read_text_file", Allowed},
		{"filesystem", "list_directory", Allowed},
		{"filesystem", "search_files", Allowed},
		{"filesystem", "move_file", NeedsApproval},
		{"filesystem", "edit_file", NeedsApproval}, // approve extends allow
		{"filesystem", "EDIT_FILE", NeedsApproval},
		{"filesystem", "write_file", Denied},
		{"filesystem", "WRITE_FILE", Denied},
		{"filesystem", "write\u200bfile", Denied},          // zero-width space: outside allow
		{"filesystem", "write_\u200dfile", Denied},         // zero-width joiner folded away → write_file
		{"filesystem", "ｗｒｉｔｅ_ｆｉｌｅ", Denied},               // full-width letters (NFKC)
		{"filesystem", "create_directory", Denied},         // not allowed
		{"filesystem", "search_files_recursively", Denied}, // globs match whole names
		{"open", "anything", Allowed},
		{"other", "write_file", Allowed},
	}
	for _, c := range cases {
		if got := p.Decide(c.backend, c.tool); got != c.want {
			t.Errorf("Decide(%q, %q) = %v, want %v", c.backend, c.tool, got, c.want)
		}
	}
	var none *Policy
	if none.Decide("filesystem", "write_file") != Allowed {
		t.Error("a nil policy must allow")
	}
}

func TestGlob(t *testing.T) {
	for _, c := range []struct {
		pattern, name string
		want          bool
	}{
		{"*", "", true}, {"*", "abc", true}, {"a*c", "abbbc", true}, {"a*c", "abcd", false},
		{"?bc", "abc", true}, {"?bc", "bc", false}, {"a*b*c", "axxbyyc", true}, {"a*b*c", "axxbyy", false},
		{"read_*", "read_", true}, {"read_*", "rea", false}, {"é*", "éclair", true},
	} {
		if got := glob(c.pattern, c.name); got != c.want {
			t.Errorf("glob(%q, %q) = %v, want %v", c.pattern, c.name, got, c.want)
		}
	}
}
