package surface

import (
	"strings"
	"testing"
)

// TestFoldCollisions: the names the same backends share, settled the same
// way, make one group and one line (issue 33, 6: two filesystem servers
// gave fourteen WARN lines); other backends or another winner make
// another group, and a group of one reads as the collision's own message.
func TestFoldCollisions(t *testing.T) {
	c := func(name, winner string, backends ...string) NameCollision {
		listed := map[string]string{}
		for _, b := range backends {
			listed[b] = b + "__" + name
		}
		if winner != "" {
			listed[winner] = name
		}
		return NameCollision{Kind: KindTool, Name: name, Backends: backends, Winner: winner, Listed: listed}
	}
	groups := FoldCollisions([]NameCollision{
		c("read_file", "filesystem", "filesystem", "docs2"),
		c("write_file", "filesystem", "filesystem", "docs2"),
		c("echo", "", "a", "b"),
		c("list", "filesystem", "filesystem", "docs2"),
	})
	if len(groups) != 2 || strings.Join(groups[0].Names, ",") != "read_file,write_file,list" || len(groups[1].Names) != 1 {
		t.Fatalf("groups: %+v", groups)
	}
	want := `backends "filesystem" and "docs2" both offer 3 tools (read_file, write_file, list); "filesystem" keeps the names, "docs2" lists them prefixed (e.g. "docs2__read_file")`
	if got := groups[0].Message(); got != want {
		t.Errorf("message:\n got %s\nwant %s", got, want)
	}
	if got := groups[1].Message(); got != groups[1].first.message() || !strings.Contains(got, `tool "echo"`) {
		t.Errorf("a group of one: %s", got)
	}
}
