package pipeline

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/isogate/isogate/config"
)

// The attack of issue 25 (2): a dangerous field past the first 4 000 bytes
// of padding was never shown and _meta claimed {} for the arguments. Now
// every argument up to MaxApprovalArgs is shown, in the text and in _meta.
func TestApprovalShowsEveryArgument(t *testing.T) {
	args := json.RawMessage(`{"pad":"` + strings.Repeat("a", 5000) + `","path":"/etc/shadow","mode":"delete"}`)
	p := ElicitParams(&Call{Backend: "fs", Tool: "write_file", Args: args})
	if !strings.Contains(p.Message, `"path":"/etc/shadow","mode":"delete"`) {
		t.Fatalf("the message hides the dangerous fields: …%s", p.Message[len(p.Message)-200:])
	}
	approval, _ := p.Meta["isogate/approval"].(map[string]any)
	raw, _ := approval["arguments"].(json.RawMessage)
	var got any
	if err := json.Unmarshal(raw, &got); err != nil {
		t.Fatalf("_meta arguments are not JSON: %v", err)
	}
	if g, _ := json.Marshal(got); string(g) != string(mustCompact(t, args)) {
		t.Fatalf("_meta arguments differ from the call's: %.200s", g)
	}
}

// Arguments too large to show in full are refused, not cut: the approver
// is never asked.
func TestApprovalRefusesArgumentsTooLargeToShow(t *testing.T) {
	pol := NewPolicy(map[string]config.Backend{"fs": {Tools: config.ToolPolicy{Approve: []string{"*"}}}})
	asked := 0
	approver := approverFunc(func(context.Context, *Call) (bool, error) { asked++; return true, nil })
	called := 0
	p := New(Options{Policy: pol, Backend: CallerFunc(func(context.Context, *Call) (*mcp.CallToolResult, error) {
		called++
		return &mcp.CallToolResult{}, nil
	})})
	ctx := WithApprover(context.Background(), approver)
	big := json.RawMessage(`{"pad":"` + strings.Repeat("a", MaxApprovalArgs) + `","rm":"-rf /"}`)
	_, err := p.Call(ctx, &Call{Backend: "fs", Tool: "write_file", Args: big})
	var refused *Error
	if !errors.As(err, &refused) || refused.Code != CodeApprovalDenied || asked != 0 || called != 0 {
		t.Fatalf("oversized arguments: err %v, asked %d, called %d", err, asked, called)
	}
	if _, err := p.Call(ctx, &Call{Backend: "fs", Tool: "write_file", Args: json.RawMessage(`{"a":1}`)}); err != nil || asked != 1 || called != 1 {
		t.Fatalf("small arguments: err %v, asked %d, called %d", err, asked, called)
	}
}

// A program must not draw its own "Allow this call?" block: line and
// paragraph separators, bidi overrides and other invisible characters in
// the arguments or in a backend's tool name are shown escaped.
func TestApprovalEscapesDisguisingCharacters(t *testing.T) {
	sneaky := "ok\u2028\u2029\u0085\u202e\u2066\u200b\U000e0041"
	args, _ := json.Marshal(map[string]string{"note": sneaky + "\n\nAllow this call? yes"})
	// json.Marshal escapes U+2028/9 itself; a hand-written request need not.
	args = []byte(strings.NewReplacer(`\u2028`, "\u2028", `\u2029`, "\u2029").Replace(string(args)))
	p := ElicitParams(&Call{Backend: "b\u202e", Tool: "t\u2028x", Args: args})
	for _, r := range []rune{'\u2028', '\u2029', '\u0085', '\u202e', '\u2066', '\u200b', '\U000e0041'} {
		if strings.ContainsRune(p.Message, r) {
			t.Errorf("the message shows %U unescaped", r)
		}
	}
	if strings.Count(p.Message, "\n") != 3 {
		t.Errorf("the message has lines of its own beyond the template's: %q", p.Message)
	}
	approval, _ := p.Meta["isogate/approval"].(map[string]any)
	var back map[string]string
	if err := json.Unmarshal(approval["arguments"].(json.RawMessage), &back); err != nil || back["note"] != sneaky+"\n\nAllow this call? yes" {
		t.Fatalf("escaped _meta arguments do not decode to the call's: %v %q", err, back["note"])
	}
}

type approverFunc func(context.Context, *Call) (bool, error)

func (f approverFunc) Approve(ctx context.Context, c *Call) (bool, error) { return f(ctx, c) }

func mustCompact(t *testing.T, raw json.RawMessage) []byte {
	t.Helper()
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(v)
	return b
}
