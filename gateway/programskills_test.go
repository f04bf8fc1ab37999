package gateway

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestSavedProgramsAsSkills (issue 45): every gateway serves the saved
// programs a principal may call as its own skills: alice's program is
// listed by skills/list to alice as skill://isogate/programs/<name>/SKILL.md
// and both its files read back with the size and sha256 the entry gives
// (SKILL.md's frontmatter as listed, program.ts the saved code, the body
// naming the tool to call); bob does not see it until an admin publishes
// it to him; carol's rules deny programs.report_*, so her report_x is no
// skill of hers. Red without the source in app's wiring: no program
// skills at all.
func TestSavedProgramsAsSkills(t *testing.T) {
	h := programsGateway(t, t.TempDir(), "")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	connect := func(who string) *mcp.ClientSession {
		cs, err := skillsClient(t, nil).Connect(ctx, &mcp.StreamableClientTransport{Endpoint: h.url,
			HTTPClient: &http.Client{Transport: bearer{programTokens[who].Token}}}, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cs.Close() })
		return cs
	}
	alice, bob, carol, root := connect("alice"), connect("bob"), connect("carol"), connect("root")
	if text, isErr, _ := callProgramTool(t, alice, "save_program", map[string]any{
		"name": "echo_twice", "description": "Echoes x twice.", "code": echoTwice, "parameters": "{ x: string }"}); isErr {
		t.Fatalf("save: %s", text)
	}
	if text, isErr, _ := callProgramTool(t, carol, "save_program", map[string]any{
		"name": "report_x", "description": "d", "code": `return 1`}); isErr {
		t.Fatalf("carol saves: %s", text)
	}
	const uri = "skill://isogate/programs/echo-twice/SKILL.md"
	programSkills := func(cs *mcp.ClientSession) []string {
		list, err := listSkills(ctx, cs)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, e := range list {
			if strings.HasPrefix(e.URI, "skill://isogate/programs/") {
				out = append(out, e.URI)
			}
			if e.URI == uri && cs == alice {
				texts := verifySkill(ctx, t, cs, e)
				if src := texts[strings.Replace(uri, "SKILL.md", "program.ts", 1)]; !strings.Contains(src, echoTwice) {
					t.Errorf("program.ts: %q", src)
				}
				if md := texts[uri]; !strings.Contains(md, "program_echo_twice") || !strings.Contains(md, "Echoes x twice.") {
					t.Errorf("SKILL.md: %q", md)
				}
			}
		}
		return out
	}
	if got := programSkills(alice); len(got) != 1 || got[0] != uri {
		t.Fatalf("alice's program skills: %v", got)
	}
	if got := programSkills(bob); len(got) != 0 {
		t.Fatalf("bob sees %v before a publication", got)
	}
	if got := programSkills(carol); len(got) != 0 {
		t.Fatalf("carol sees %v: her rules deny programs.report_*", got)
	}
	if text, isErr, _ := callProgramTool(t, root, "programs", map[string]any{"action": "publish", "owner": "alice", "name": "echo_twice", "to": []string{"bob"}}); isErr {
		t.Fatalf("root publishes: %s", text)
	}
	if got := programSkills(bob); len(got) != 1 || got[0] != uri {
		t.Fatalf("bob's program skills once published to him: %v", got)
	}
}
