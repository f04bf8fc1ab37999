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
		// DeniedBy agrees, and names the rule and the pattern in it.
		rule, pattern := p.DeniedBy(c.backend, c.tool)
		want := map[Decision][2]string{Allowed: {}, NeedsApproval: {}, Denied: {"backends.filesystem.tools.allow", ""}}[c.want]
		if c.want == Denied && fold(c.tool) == "write_file" {
			want = [2]string{"backends.filesystem.tools.deny", "write_file"}
		}
		if [2]string{rule, pattern} != want {
			t.Errorf("DeniedBy(%q, %q) = %q, %q, want %q", c.backend, c.tool, rule, pattern, want)
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

// Prompts and resources follow the backend's tool policy unless configured
// on their own; catch-all templates need an explicit allow.
func TestPolicyPromptsAndResources(t *testing.T) {
	p := NewPolicy(map[string]config.Backend{
		"closed": {Tools: config.ToolPolicy{Deny: []string{"**"}}},
		"opened": {Tools: config.ToolPolicy{Deny: []string{"*"}}, Prompts: config.ItemPolicy{Allow: []string{"help"}}},
		"files": {Resources: config.ItemPolicy{Allow: []string{"file:///srv/*", "{+uri}"}, Deny: []string{"file:///srv/secret*"}},
			Prompts: config.ItemPolicy{Deny: []string{"admin_*"}}},
		"partial": {Tools: config.ToolPolicy{Deny: []string{"write_*"}}},
	})
	check := func(what string, got, want Decision) {
		t.Helper()
		if got != want {
			t.Errorf("%s = %v, want %v", what, got, want)
		}
	}
	check("closed prompt", p.DecidePrompt("closed", "anything"), Denied)
	check("closed resource", p.DecideResource("closed", "mem://x"), Denied)
	check("closed template", p.DecideTemplate("closed", "mem://{id}"), Denied)
	check("opened help", p.DecidePrompt("opened", "HELP"), Allowed)
	check("opened other", p.DecidePrompt("opened", "other"), Denied)
	check("opened resource", p.DecideResource("opened", "mem://x"), Denied)
	check("files allowed", p.DecideResource("files", "file:///srv/a.txt"), Allowed)
	check("files denied", p.DecideResource("files", "FILE:///srv/secret.txt"), Denied)
	check("files outside", p.DecideResource("files", "file:///etc/passwd"), Denied)
	check("files catch-all allowed", p.DecideTemplate("files", "{+uri}"), Allowed)
	check("files prompt", p.DecidePrompt("files", "Admin_reset"), Denied)
	check("partial prompt", p.DecidePrompt("partial", "x"), Allowed)
	check("partial resource", p.DecideResource("partial", "mem://x"), Allowed)
	check("partial catch-all", p.DecideTemplate("partial", "{+any}"), Denied)
	check("unconfigured catch-all", p.DecideTemplate("other", "{scheme}://{+path}"), Denied)
	check("unconfigured template", p.DecideTemplate("other", "mem://{id}"), Allowed)
	check("unconfigured prompt", p.DecidePrompt("other", "x"), Allowed)
	if !p.ResourceDenied("files", "file:///srv/secret/key") || p.ResourceDenied("files", "file:///srv/a") {
		t.Error("ResourceDenied")
	}
	for tmpl, want := range map[string]bool{"{+any}": true, "{s}://{+p}": true, "x{y}": true, "file:///{+path}": false, "mem://{id}": false, "plain": false} {
		if CatchAll(tmpl) != want {
			t.Errorf("CatchAll(%q) = %v", tmpl, !want)
		}
	}
}
