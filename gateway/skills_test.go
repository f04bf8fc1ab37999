package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/isogate/isogate/config"
	"github.com/isogate/isogate/internal/app"
	"github.com/isogate/isogate/internal/authn"
	"github.com/isogate/isogate/internal/backend"
	"github.com/isogate/isogate/internal/skills"
)

// The Skills extension through isogate (internal/skills, docs/tools.md
// "Skills"): backends' skills under a per-backend prefix, isogate's own
// skills per principal, in both protocol eras, with real go-sdk servers
// and clients.

// skillFiles are the files of one skill a test backend serves, by path.
type skillFiles map[string]string

// skillsBackend is a go-sdk server that declares the Skills extension and
// serves each skill (by skill path) under skill://<path>/ both through
// skills/list and skills/get and as resources; got records every read and
// skills/get that reaches it.
func skillsBackend(name string, got *seen, served map[string]skillFiles) *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: name}, &mcp.ServerOptions{Capabilities: &mcp.ServerCapabilities{
		Tools: &mcp.ToolCapabilities{}, Resources: &mcp.ResourceCapabilities{},
		Extensions: map[string]any{skills.Extension: map[string]any{}}}})
	mcp.AddTool(s, &mcp.Tool{Name: "echo"}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{}, nil, nil
	})
	var entries []skills.Entry
	for _, p := range slices.Sorted(func(yield func(string) bool) {
		for p := range served {
			if !yield(p) {
				return
			}
		}
	}) {
		files := served[p]
		fm, err := skills.Frontmatter([]byte(files["SKILL.md"]))
		if err != nil {
			panic(err)
		}
		raw, _ := json.Marshal(fm)
		e := skills.Entry{URI: "skill://" + p + "/SKILL.md", Frontmatter: raw}
		for _, f := range slices.Sorted(func(yield func(string) bool) {
			for f := range files {
				if !yield(f) {
					return
				}
			}
		}) {
			uri := "skill://" + p + "/" + f
			content := files[f]
			e.Resources.Files = append(e.Resources.Files, skills.Resource{URI: uri, Digest: skills.Digest([]byte(content)), Size: int64(len(content))})
			s.AddResource(&mcp.Resource{URI: uri, Name: f, MIMEType: "text/markdown"}, func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
				got.add("read " + req.Params.URI)
				return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, MIMEType: "text/markdown", Text: content}}}, nil
			})
		}
		entries = append(entries, e)
	}
	if err := mcp.AddReceivingCustomMethod(s, skills.MethodList, func(context.Context, *mcp.ServerSession, *skills.ListParams) (*skills.ListResult, error) {
		return &skills.ListResult{ResultType: "complete", Skills: entries, Cacheable: mcp.Cacheable{CacheScope: "public"}}, nil
	}); err != nil {
		panic(err)
	}
	if err := mcp.AddReceivingCustomMethod(s, skills.MethodGet, func(_ context.Context, _ *mcp.ServerSession, p *skills.GetParams) (*skills.GetResult, error) {
		got.add("get " + p.URI)
		for _, e := range entries {
			if e.URI == p.URI {
				return &skills.GetResult{ResultType: "complete", Skill: e, Cacheable: mcp.Cacheable{CacheScope: "public"}}, nil
			}
		}
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "No skill is served at " + p.URI}
	}); err != nil {
		panic(err)
	}
	return s
}

// refundsSkill is the skill both test backends serve at skill://refunds,
// each its own way.
func refundsSkill(backend string) skillFiles {
	return skillFiles{
		"SKILL.md":          "---\nname: refunds\ndescription: Refund the " + backend + " way\nlicense: MIT\nmetadata:\n  team: " + backend + "\n---\n# Refunds at " + backend + "\n\nSee [the email](examples/email.md).\n",
		"examples/email.md": "Dear customer, your refund from " + backend + " is on its way.\n",
	}
}

// skillsGateway serves alpha and beta (both with skill://refunds; beta
// also skill://private, which backends.beta.resources.deny refuses) and
// isogate's own skills from sources.
func skillsGateway(t *testing.T, mutate func(*config.Config), sources ...skills.Source) (g *Gateway, base string, alphaSeen, betaSeen *seen) {
	t.Helper()
	alphaSeen, betaSeen = &seen{}, &seen{}
	alpha := backend.InMemory("alpha", skillsBackend("alpha", alphaSeen, map[string]skillFiles{"refunds": refundsSkill("alpha")}))
	beta := backend.InMemory("beta", skillsBackend("beta", betaSeen, map[string]skillFiles{"refunds": refundsSkill("beta"),
		"private": {"SKILL.md": "---\nname: private\ndescription: beta's secret\n---\nsecret\n"}}))
	beta.Resources.Deny = []string{"skill://private/*"}
	// plain does not declare the extension: its skill:// resources are
	// ordinary ones, except one under alpha's prefix (an impersonation).
	plain := mcp.NewServer(&mcp.Implementation{Name: "plain"}, nil)
	mcp.AddTool(plain, &mcp.Tool{Name: "echo"}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{}, nil, nil
	})
	plainSpec := backend.InMemory("plain", plain)
	plainSpec.Priority = 10 // it would win a URI it shares with alpha
	for _, uri := range []string{"skill://alpha/refunds/SKILL.md", "skill://notes/SKILL.md"} {
		plain.AddResource(&mcp.Resource{URI: uri, Name: "n"}, func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, Text: "from plain"}}}, nil
		})
	}
	cfg := config.Default()
	cfg.Server.CacheDir = t.TempDir()
	cfg.Sandbox.Isolation = config.IsolationThread
	if mutate != nil {
		mutate(cfg)
	}
	g, base = serveHealthy(t, cfg, app.Options{Runner: testPool(), Logger: slog.New(slog.DiscardHandler),
		ExtraSpecs: []backend.Spec{alpha, beta, plainSpec}, Skills: sources})
	return g, base, alphaSeen, betaSeen
}

// skillsClient is a go-sdk client that can send skills/list and skills/get.
func skillsClient(t *testing.T, opts *mcp.ClientOptions) *mcp.Client {
	t.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: "host"}, opts)
	if err := addSkillMethods(c); err != nil {
		t.Fatal(err)
	}
	return c
}

// addSkillMethods lets c's sessions send skills/list and skills/get.
func addSkillMethods(c *mcp.Client) error { return skills.AddClientMethods(c) }

// listSkills is the client's skills/list.
func listSkills(ctx context.Context, cs *mcp.ClientSession) ([]skills.Entry, error) {
	res, err := mcp.CallCustomMethod[*skills.ListParams, *skills.ListResult](ctx, cs, skills.MethodList, &skills.ListParams{})
	if err != nil {
		return nil, err
	}
	return res.Skills, nil
}

// getSkill is the client's skills/get.
func getSkill(ctx context.Context, cs *mcp.ClientSession, uri string) (*skills.Entry, error) {
	res, err := mcp.CallCustomMethod[*skills.GetParams, *skills.GetResult](ctx, cs, skills.MethodGet, &skills.GetParams{URI: uri})
	if err != nil {
		return nil, err
	}
	return &res.Skill, nil
}

// verifySkill reads every file of e as a host does and checks it against
// the entry: the URI asked, its size and its SHA-256; and SKILL.md's
// frontmatter against the entry's. It returns the files' text by URI.
func verifySkill(ctx context.Context, t *testing.T, cs *mcp.ClientSession, e skills.Entry) map[string]string {
	t.Helper()
	out := map[string]string{}
	if e.Resources.Dynamic || len(e.Resources.Files) == 0 || e.Resources.Files[0].URI != e.URI {
		t.Errorf("%s: resources %+v, want SKILL.md first", e.URI, e.Resources)
	}
	for _, r := range e.Resources.Files {
		res, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: r.URI})
		if err != nil {
			t.Errorf("reading %s: %v", r.URI, err)
			continue
		}
		c := res.Contents[0]
		b := []byte(c.Text)
		if c.Blob != nil {
			b = c.Blob
		}
		if c.URI != r.URI || int64(len(b)) != r.Size || skills.Digest(b) != r.Digest {
			t.Errorf("%s read as %s, %d bytes, %s; the entry says %d bytes, %s", r.URI, c.URI, len(b), skills.Digest(b), r.Size, r.Digest)
		}
		out[r.URI] = string(b)
	}
	fm, err := skills.Frontmatter([]byte(out[e.URI]))
	if err != nil {
		t.Errorf("%s: %v", e.URI, err)
		return out
	}
	var entry map[string]any
	_ = json.Unmarshal(e.Frontmatter, &entry)
	if b1, _ := json.Marshal(fm); string(b1) != string(mustJSON(entry)) {
		t.Errorf("%s: frontmatter %s, the entry's %s", e.URI, b1, e.Frontmatter)
	}
	return out
}

func mustJSON(v any) []byte {
	b, _ := json.Marshal(v)
	return b
}

// isInvalidParams reports whether err is JSON-RPC -32602 with the
// extension's message for uri.
func isInvalidParams(err error, uri string) bool {
	var je *jsonrpc.Error
	return errors.As(err, &je) && je.Code == jsonrpc.CodeInvalidParams && je.Message == "No skill is served at "+uri
}

// TestSkillsOfTwoBackendsKeptApart: two backends both serve
// skill://refunds (each its own files); through isogate, in both protocol
// eras, the initialize result declares the extension, skills/list lists
// both as skill://alpha/refunds and skill://beta/refunds beside isogate's
// own skill://isogate/programs/..., every file read through isogate has the
// size and SHA-256 its entry says (and the frontmatter its entry carries),
// skills/get answers each entry as listed, and resources/list shows the
// files under their prefixes only. Policy: backends.beta.resources.deny
// keeps beta's skill://private out of every answer, and a read of it never
// reaches beta; an unprefixed URI names no skill. A backend that does not
// declare the extension keeps its skill:// resources as ordinary ones,
// except one under alpha's prefix, which is neither listed nor served.
func TestSkillsOfTwoBackendsKeptApart(t *testing.T) {
	program, err := skills.ProgramSkill(skills.Program{Name: "weekly_report", Description: "Build the weekly report.", Version: 2,
		Parameters: json.RawMessage(`{"type":"object","properties":{"week":{"type":"integer"}},"required":["week"]}`),
		Code:       "return await alpha.echo({});", Tool: "weekly_report"})
	if err != nil {
		t.Fatal(err)
	}
	src := skills.SourceFunc(func(context.Context, *authn.Principal) ([]skills.Skill, error) { return []skills.Skill{program}, nil })
	g, _, _, betaSeen := skillsGateway(t, nil, src)
	for _, version := range []string{"2025-11-25", "2026-07-28"} {
		t.Run(version, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			changed := make(chan struct{}, 64)
			st, ct := mcp.NewInMemoryTransports()
			if _, err := g.Server().Connect(ctx, st, nil); err != nil {
				t.Fatal(err)
			}
			cs, err := skillsClient(t, &mcp.ClientOptions{ResourceListChangedHandler: func(context.Context, *mcp.ResourceListChangedRequest) {
				changed <- struct{}{}
			}}).Connect(ctx, ct, &mcp.ClientSessionOptions{ProtocolVersion: version})
			if err != nil {
				t.Fatal(err)
			}
			defer cs.Close()
			ir := cs.InitializeResult()
			if !skills.Declared(ir) || ir.Capabilities.Resources == nil || ir.ProtocolVersion != version {
				t.Fatalf("initialize result does not declare skills and resources on %s: %+v", version, ir)
			}
			list, err := listSkills(ctx, cs)
			if err != nil {
				t.Fatal(err)
			}
			var uris []string
			for _, e := range list {
				uris = append(uris, e.URI)
			}
			want := []string{"skill://isogate/programs/weekly-report/SKILL.md", "skill://alpha/refunds/SKILL.md", "skill://beta/refunds/SKILL.md"}
			if !slices.Equal(uris, want) {
				t.Fatalf("skills/list: %v, want %v", uris, want)
			}
			texts := map[string]string{}
			for _, e := range list {
				for uri, text := range verifySkill(ctx, t, cs, e) {
					texts[uri] = text
				}
				got, err := getSkill(ctx, cs, e.URI)
				if err != nil || string(mustJSON(got)) != string(mustJSON(e)) {
					t.Errorf("skills/get %s: %s %v; listed %s", e.URI, mustJSON(got), err, mustJSON(e))
				}
			}
			if !strings.Contains(texts["skill://alpha/refunds/examples/email.md"], "from alpha") ||
				!strings.Contains(texts["skill://beta/refunds/examples/email.md"], "from beta") {
				t.Errorf("the two backends' refunds were mixed up: %v", texts)
			}
			if texts["skill://isogate/programs/weekly-report/program.ts"] != "return await alpha.echo({});" {
				t.Errorf("program source: %q", texts["skill://isogate/programs/weekly-report/program.ts"])
			}
			for _, uri := range []string{"skill://beta/private/SKILL.md", "skill://refunds/SKILL.md", "skill://gamma/refunds/SKILL.md"} {
				if _, err := getSkill(ctx, cs, uri); !isInvalidParams(err, uri) {
					t.Errorf("skills/get %s: %v, want -32602", uri, err)
				}
				if _, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri}); err == nil {
					t.Errorf("resources/read %s answered", uri)
				}
			}
			// The aggregated resource lists are published in the background.
			wantFiles := []string{"skill://alpha/refunds/SKILL.md", "skill://alpha/refunds/examples/email.md",
				"skill://beta/refunds/SKILL.md", "skill://beta/refunds/examples/email.md",
				"skill://isogate/programs/weekly-report/SKILL.md", "skill://isogate/programs/weekly-report/program.ts",
				"skill://notes/SKILL.md"}
			if res, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "skill://notes/SKILL.md"}); err != nil || res.Contents[0].Text != "from plain" {
				t.Errorf("plain's ordinary skill:// resource: %v", err)
			}
			for {
				var listed []string
				for r, err := range cs.Resources(ctx, nil) {
					if err != nil {
						t.Fatal(err)
					}
					if strings.HasPrefix(r.URI, "skill://") {
						listed = append(listed, r.URI)
					}
					if r.URI == "skill://alpha/refunds/SKILL.md" && r.Name != "SKILL.md" {
						t.Errorf("resources/list shows another backend's %s as alpha's: %+v", r.URI, r)
					}
				}
				slices.Sort(listed)
				if slices.Equal(listed, wantFiles) {
					break
				}
				if slices.ContainsFunc(listed, func(u string) bool { return !slices.Contains(wantFiles, u) }) {
					t.Fatalf("resources/list has skill files it must not: %v", listed)
				}
				select {
				case <-changed:
				case <-ctx.Done():
					t.Fatalf("resources/list: %v, want %v", listed, wantFiles)
				}
			}
		})
	}
	for _, r := range betaSeen.all() {
		if strings.Contains(r, "private") {
			t.Errorf("beta was asked for its denied skill: %v", betaSeen.all())
		}
	}
}

// TestOwnSkillsStayWithTheirPrincipal: alice and bob (token principals
// over HTTP, a session on 2025-11-25 and a stateless 2026-07-28 client
// each) are served the skills their source gives each; bob's skills/get,
// resources/read and resources/list of alice's skill get exactly what a
// skill that does not exist gets, never its content.
func TestOwnSkillsStayWithTheirPrincipal(t *testing.T) {
	src := skills.SourceFunc(func(_ context.Context, p *authn.Principal) ([]skills.Skill, error) {
		if p == nil {
			return nil, errors.New("no principal")
		}
		sk, err := skills.ProgramSkill(skills.Program{Name: p.Name + "_secret", Description: p.Name + "'s own program", Version: 1,
			Code: "return '" + p.Name + "-secret';", Tool: p.Name + "_secret"})
		return []skills.Skill{sk}, err
	})
	for _, stateless := range []bool{false, true} {
		version := "2025-11-25"
		if stateless {
			version = "2026-07-28"
		}
		t.Run(version, func(t *testing.T) {
			_, base, _, _ := skillsGateway(t, func(c *config.Config) {
				c.Server.Auth.Mode = config.AuthToken
				c.Server.Auth.Tokens = redteamTokens
				c.Server.Stateless = stateless
			}, src)
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			clients := map[string]*mcp.ClientSession{}
			for _, who := range []string{"alice", "bob"} {
				cs, err := skillsClient(t, nil).Connect(ctx, &mcp.StreamableClientTransport{Endpoint: base + "/mcp",
					HTTPClient: &http.Client{Transport: bearer{redteamTokens[who].Token}}}, &mcp.ClientSessionOptions{ProtocolVersion: version})
				if err != nil {
					t.Fatal(err)
				}
				defer cs.Close()
				clients[who] = cs
			}
			own := func(who string) string { return "skill://isogate/programs/" + who + "-secret/SKILL.md" }
			for who, cs := range clients {
				list, err := listSkills(ctx, cs)
				if err != nil {
					t.Fatal(err)
				}
				var mine []skills.Entry
				for _, e := range list {
					if strings.HasPrefix(e.URI, "skill://isogate/") {
						mine = append(mine, e)
					}
				}
				if len(mine) != 1 || mine[0].URI != own(who) {
					t.Fatalf("%s's own skills: %+v", who, mine)
				}
				texts := verifySkill(ctx, t, cs, mine[0])
				if !strings.Contains(texts[strings.Replace(own(who), "SKILL.md", "program.ts", 1)], who+"-secret") {
					t.Errorf("%s's program source: %v", who, texts)
				}
				for r, err := range cs.Resources(ctx, nil) {
					if err != nil {
						t.Fatal(err)
					}
					if strings.Contains(r.URI, "-secret/") && !strings.Contains(r.URI, "/"+who+"-secret/") {
						t.Errorf("%s's resources/list shows %s", who, r.URI)
					}
				}
			}
			bob := clients["bob"]
			for _, uri := range []string{own("alice"), own("nobody")} {
				if _, err := getSkill(ctx, bob, uri); !isInvalidParams(err, uri) {
					t.Errorf("bob's skills/get %s: %v", uri, err)
				}
			}
			read := func(uri string) string {
				res, err := bob.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
				if err != nil {
					return strings.ReplaceAll(err.Error(), "alice", "X")
				}
				return "read: " + res.Contents[0].Text
			}
			for _, f := range []string{"SKILL.md", "program.ts"} {
				got := read("skill://isogate/programs/alice-secret/" + f)
				unknown := strings.ReplaceAll(read("skill://isogate/programs/nobody-secret/"+f), "nobody", "X")
				if got != unknown || strings.Contains(got, "alice-secret'") {
					t.Errorf("bob reads alice's %s: %q; a skill that does not exist: %q", f, got, unknown)
				}
			}
		})
	}
}
