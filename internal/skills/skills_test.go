package skills

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/isogate/isogate/internal/authn"
)

var refundParams = json.RawMessage(`{"type":"object","properties":{"order_id":{"type":"string","description":"The order | its id"},` +
	`"amount":{"type":"number"},"notify":{"type":["boolean","null"],"description":"tell the customer"}},"required":["order_id","amount"]}`)

const refundCode = "const o = await shop.get_order({id: args.order_id});\nreturn await shop.refund({id: o.id, amount: args.amount});\n"

// TestProgramSkill: a saved program rendered as a skill is a valid one
// (SKILL.md first, frontmatter name = the path's last segment), whose
// frontmatter, parameters table, schema and calls say what the program
// is, whose source file is the program's code byte for byte, and whose
// entry carries each file's exact SHA-256 and size.
func TestProgramSkill(t *testing.T) {
	sk, err := ProgramSkill(Program{Name: "Refund_Order", Description: "Refund an order and tell the customer.", Version: 3,
		Parameters: refundParams, Code: refundCode, Tool: "refund_order"})
	if err != nil {
		t.Fatal(err)
	}
	if sk.Path != "programs/refund-order" {
		t.Errorf("path %q", sk.Path)
	}
	c, err := check(sk)
	if err != nil {
		t.Fatalf("the rendered skill does not check: %v", err)
	}
	if c.entry.URI != "skill://isogate/programs/refund-order/SKILL.md" {
		t.Errorf("entry uri %q", c.entry.URI)
	}
	var fm map[string]any
	if err := json.Unmarshal(c.entry.Frontmatter, &fm); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"name": "refund-order", "description": "Refund an order and tell the customer.",
		"metadata": map[string]any{"program": "Refund_Order", "version": "3", "tool": "refund_order"}}
	if !reflect.DeepEqual(fm, want) {
		t.Errorf("frontmatter %v, want %v", fm, want)
	}
	md := string(sk.Files[0].Content)
	for _, s := range []string{
		"## When to use it", "`Refund_Order@3`",
		"| `order_id` | string | yes | The order \\| its id |", "| `amount` | number | yes |  |", "| `notify` | boolean \\| null | no | tell the customer |",
		"```json\n{\n  \"type\": \"object\"",
		"`tools/call` of `refund_order` with arguments such as `{\"amount\": 0, \"order_id\": \"…\"}`",
		"`await programs.Refund_Order({\"amount\": 0, \"order_id\": \"…\"})`", "[program.ts](program.ts)",
	} {
		if !strings.Contains(md, s) {
			t.Errorf("SKILL.md lacks %q:\n%s", s, md)
		}
	}
	if string(sk.Files[1].Content) != refundCode || sk.Files[1].Path != ProgramSource {
		t.Errorf("source file %q: %q", sk.Files[1].Path, sk.Files[1].Content)
	}
	if len(c.entry.Resources.Files) != 2 {
		t.Fatalf("resources %+v", c.entry.Resources)
	}
	for i, r := range c.entry.Resources.Files {
		sum := sha256.Sum256(sk.Files[i].Content)
		if r.Digest != "sha256:"+hex.EncodeToString(sum[:]) || r.Size != int64(len(sk.Files[i].Content)) {
			t.Errorf("resource %d: %+v", i, r)
		}
	}
}

// TestProgramSkillRefusesWhatNoSkillCanBe: a name that gives no Agent
// Skills name, no description, or parameters that are not JSON.
func TestProgramSkillRefusesWhatNoSkillCanBe(t *testing.T) {
	for _, p := range []Program{
		{Name: "a__b", Description: "x"},
		{Name: "-a", Description: "x"},
		{Name: strings.Repeat("a", 65), Description: "x"},
		{Name: "ok", Description: "  "},
		{Name: "ok", Description: "x", Parameters: json.RawMessage(`{"properties":`)},
	} {
		if _, err := ProgramSkill(p); err == nil {
			t.Errorf("%+v rendered", p)
		}
	}
	sk, err := ProgramSkill(Program{Name: "none", Description: strings.Repeat("é", 2000), Tool: "none"})
	if err != nil {
		t.Fatal(err)
	}
	c, err := check(sk)
	if err != nil {
		t.Fatal(err)
	}
	if c.desc == "" || len([]rune(c.desc)) != maxDescription || !strings.Contains(string(sk.Files[0].Content), "None: call it with `{}`") {
		t.Errorf("long description %d characters in the frontmatter", len([]rune(c.desc)))
	}
}

// TestFrontmatterVerbatim: every field an author wrote reaches the entry,
// nested and typed as YAML has it; a SKILL.md without frontmatter, name or
// description, or whose name is not its directory's, is not served.
func TestFrontmatterVerbatim(t *testing.T) {
	md := "---\nname: pdf\ndescription: >\n  Fill PDF\n  forms.\nlicense: Apache-2.0\nmetadata:\n  version: \"2.1\"\n  depth: 3\nallowed-tools: [a, b]\n---\n# body\n"
	c, err := check(Skill{Path: "docs/pdf", Files: []File{{Path: "SKILL.md", Content: []byte(md)}, {Path: "ref/FORMS.md", Content: []byte("x")}}})
	if err != nil {
		t.Fatal(err)
	}
	var fm map[string]any
	_ = json.Unmarshal(c.entry.Frontmatter, &fm)
	want := map[string]any{"name": "pdf", "description": "Fill PDF forms.\n", "license": "Apache-2.0",
		"metadata": map[string]any{"version": "2.1", "depth": float64(3)}, "allowed-tools": []any{"a", "b"}}
	if !reflect.DeepEqual(fm, want) {
		t.Errorf("frontmatter %v\nwant %v", fm, want)
	}
	if c.order[1] != "skill://isogate/docs/pdf/ref/FORMS.md" {
		t.Errorf("files %v", c.order)
	}
	for what, s := range map[string]Skill{
		"no frontmatter":  {Path: "pdf", Files: []File{{Path: "SKILL.md", Content: []byte("# pdf\n")}}},
		"no closing":      {Path: "pdf", Files: []File{{Path: "SKILL.md", Content: []byte("---\nname: pdf\n")}}},
		"no description":  {Path: "pdf", Files: []File{{Path: "SKILL.md", Content: []byte("---\nname: pdf\n---\n")}}},
		"another name":    {Path: "pdf", Files: []File{{Path: "SKILL.md", Content: []byte("---\nname: doc\ndescription: d\n---\n")}}},
		"no SKILL.md":     {Path: "pdf", Files: []File{{Path: "README.md", Content: []byte("x")}}},
		"escaping file":   {Path: "pdf", Files: []File{{Path: "SKILL.md", Content: []byte("---\nname: pdf\ndescription: d\n---\n")}, {Path: "../x", Content: nil}}},
		"escaping path":   {Path: "../pdf", Files: []File{{Path: "SKILL.md", Content: []byte("---\nname: pdf\ndescription: d\n---\n")}}},
		"upper-case name": {Path: "PDF", Files: []File{{Path: "SKILL.md", Content: []byte("---\nname: PDF\ndescription: d\n---\n")}}},
	} {
		if _, err := check(s); err == nil {
			t.Errorf("%s: served", what)
		}
	}
}

// TestResourcesWire: an entry's resources are an array or "dynamic" on
// the wire, and anything else is refused when read.
func TestResourcesWire(t *testing.T) {
	b, _ := json.Marshal(Entry{URI: "skill://a/SKILL.md", Frontmatter: json.RawMessage(`{}`), Resources: Resources{Dynamic: true}})
	if !strings.Contains(string(b), `"resources":"dynamic"`) {
		t.Error(string(b))
	}
	b, _ = json.Marshal(Entry{URI: "skill://a/SKILL.md", Frontmatter: json.RawMessage(`{}`)})
	if !strings.Contains(string(b), `"resources":[]`) {
		t.Error(string(b))
	}
	var e Entry
	if err := json.Unmarshal([]byte(`{"uri":"u","frontmatter":{},"resources":[{"uri":"x","digest":"sha256:00","size":2}]}`), &e); err != nil || len(e.Resources.Files) != 1 || e.Resources.Files[0].Size != 2 {
		t.Errorf("%+v %v", e, err)
	}
	for _, bad := range []string{`{"resources":"static"}`, `{"resources":{}}`, `{"resources":null}`} {
		if err := json.Unmarshal([]byte(bad), &e); err == nil {
			t.Errorf("%s accepted", bad)
		}
	}
}

// TestPrefixedURIs: a backend's skill URI gets the backend's name as its
// first segment (percent-encoded where a reg-name cannot hold it), and
// splits back to that name and the backend's own path.
func TestPrefixedURIs(t *testing.T) {
	for _, tc := range []struct{ backend, uri, want string }{
		{"alpha", "skill://refunds/SKILL.md", "skill://alpha/refunds/SKILL.md"},
		{"my srv:1", "SKILL://acme/billing/refunds/x.md", "skill://my%20srv%3A1/acme/billing/refunds/x.md"},
	} {
		got, ok := Prefixed(tc.backend, tc.uri)
		if !ok || got != tc.want {
			t.Errorf("Prefixed(%q, %q) = %q", tc.backend, tc.uri, got)
		}
		a, rest, ok := split(got)
		if !ok || a != tc.backend || Scheme+rest[1:] != "skill://"+tc.uri[len(Scheme):] {
			t.Errorf("split(%q) = %q %q", got, a, rest)
		}
	}
	if _, ok := Prefixed("alpha", "file:///x"); ok {
		t.Error("a file URI prefixed")
	}
}

// TestOwnSkillsPerPrincipal: skills/list, skills/get, resources/list and
// resources/read give each principal the skills its source gives it:
// another's skill is not found (-32602 for skills/get, resource not found
// for a read) exactly as one that does not exist; a source that fails
// refuses the request with SKILLS_UNAVAILABLE (retryable) rather than
// answering without its skills.
func TestOwnSkillsPerPrincipal(t *testing.T) {
	var failing error
	src := SourceFunc(func(_ context.Context, p *authn.Principal) ([]Skill, error) {
		if failing != nil {
			return nil, failing
		}
		if p == nil {
			return nil, nil
		}
		sk, err := ProgramSkill(Program{Name: p.Name + "-report", Description: p.Name + "'s report", Version: 1, Code: "return '" + p.Name + "';", Tool: p.Name + "_report"})
		return []Skill{sk}, err
	})
	s := New(Options{Sources: []Source{src}})
	as := func(name string) context.Context {
		return authn.WithPrincipal(context.Background(), &authn.Principal{Name: name})
	}
	for _, who := range []string{"alice", "bob"} {
		ctx := as(who)
		l, err := s.List(ctx, &ListParams{})
		if err != nil || len(l.Skills) != 1 || l.Skills[0].URI != "skill://isogate/programs/"+who+"-report/SKILL.md" || l.ResultType != "complete" || l.CacheScope != "private" {
			t.Fatalf("%s lists %+v %v", who, l, err)
		}
		g, err := s.Get(ctx, &GetParams{URI: l.Skills[0].URI})
		if err != nil || !reflect.DeepEqual(g.Skill, l.Skills[0]) {
			t.Errorf("%s gets %+v %v", who, g, err)
		}
		for _, r := range l.Skills[0].Resources.Files {
			res, handled, err := s.Read(ctx, r.URI)
			if err != nil || !handled || Digest([]byte(res.Contents[0].Text)) != r.Digest {
				t.Errorf("%s reads %s: %v %v", who, r.URI, handled, err)
			}
		}
		rs, _ := s.Resources(ctx)
		if len(rs) != 2 || rs[0].Name != who+"-report" || rs[0].MIMEType != "text/markdown" || rs[1].URI != "skill://isogate/programs/"+who+"-report/program.ts" {
			t.Errorf("%s resources %+v", who, rs)
		}
	}
	// bob asks for alice's skill, and for one that does not exist.
	ctx := as("bob")
	for _, uri := range []string{"skill://isogate/programs/alice-report/SKILL.md", "skill://isogate/programs/nobody-report/SKILL.md"} {
		_, err := s.Get(ctx, &GetParams{URI: uri})
		var je *jsonrpc.Error
		if !errors.As(err, &je) || je.Code != jsonrpc.CodeInvalidParams || je.Message != "No skill is served at "+uri {
			t.Errorf("bob's skills/get %s: %v", uri, err)
		}
		_, handled, err := s.Read(ctx, strings.Replace(uri, "SKILL.md", "program.ts", 1))
		if !handled || !errors.As(err, &je) || je.Code != mcp.CodeResourceNotFound {
			t.Errorf("bob's read of %s: %v %v", uri, handled, err)
		}
	}
	failing = errors.New("store down")
	for name, call := range map[string]func() error{
		"list": func() error { _, err := s.List(ctx, nil); return err },
		"get": func() error {
			_, err := s.Get(ctx, &GetParams{URI: "skill://isogate/programs/bob-report/SKILL.md"})
			return err
		},
		"read": func() error {
			_, _, err := s.Read(ctx, "skill://isogate/programs/bob-report/SKILL.md")
			return err
		},
	} {
		var je *jsonrpc.Error
		if err := call(); !errors.As(err, &je) || je.Code != jsonrpc.CodeInternalError || !strings.Contains(string(je.Data), `"code":"SKILLS_UNAVAILABLE"`) {
			t.Errorf("%s with the source down: %v", name, err)
		}
	}
	if _, handled, _ := s.Read(ctx, "isogate://stats"); handled {
		t.Error("a read of another resource handled")
	}
	// resources/list still answers with the source down, without its files.
	listed := func() []string {
		next := func(context.Context, string, mcp.Request) (mcp.Result, error) {
			return &mcp.ListResourcesResult{Resources: []*mcp.Resource{{URI: "isogate://stats"}}}, nil
		}
		res, err := s.Middleware(next)(ctx, "resources/list", &mcp.ListResourcesRequest{Params: &mcp.ListResourcesParams{}})
		if err != nil {
			t.Fatal(err)
		}
		var uris []string
		for _, r := range res.(*mcp.ListResourcesResult).Resources {
			uris = append(uris, r.URI)
		}
		return uris
	}
	if got := listed(); !reflect.DeepEqual(got, []string{"isogate://stats"}) {
		t.Errorf("resources/list with the source down: %v", got)
	}
	failing = nil
	if got := listed(); len(got) != 3 || got[1] != "skill://isogate/programs/bob-report/SKILL.md" {
		t.Errorf("resources/list: %v", got)
	}
}
