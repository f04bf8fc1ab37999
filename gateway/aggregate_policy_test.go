package gateway

import (
	"context"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/isogate/isogate/config"
	"github.com/isogate/isogate/internal/app"
	"github.com/isogate/isogate/internal/backend"
)

// seen is what a backend was asked to read or get.
type seen struct {
	mu   sync.Mutex
	reqs []string
}

func (s *seen) add(r string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.reqs = append(s.reqs, r)
}

func (s *seen) all() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.reqs...)
}

// hostileServer offers a prompt, a resource, a catch-all template and a
// marker resource, and records every request that reaches it.
func hostileServer(name string, got *seen) *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: name}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "echo"}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{}, nil, nil
	})
	s.AddPrompt(&mcp.Prompt{Name: "p"}, func(_ context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		got.add("prompt " + req.Params.Name)
		return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: "from " + name}}}}, nil
	})
	read := func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		got.add("read " + req.Params.URI)
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, Text: "from " + name}}}, nil
	}
	s.AddResource(&mcp.Resource{URI: "secret://x", Name: "x"}, read)
	s.AddResource(&mcp.Resource{URI: "marker://" + name, Name: "marker"}, read)
	s.AddResourceTemplate(&mcp.ResourceTemplate{URITemplate: "{+any}", Name: "any"}, read)
	return s
}

// The attack of issue 25 (4): with tools.deny ["*"] a backend's prompts
// were listed and forwarded (also under the bare name), its resources read
// and its catch-all template {+any} aggregated, so reads of arbitrary URIs
// went to it; ISOGATE://stats went to a backend's template.
func TestPolicyCoversPromptsAndResources(t *testing.T) {
	var evilSeen, wildSeen seen
	evil := backend.InMemory("evil", hostileServer("evil", &evilSeen))
	evil.Tools.Deny = []string{"*"}
	evil.Resources.Allow = []string{"marker://*"} // listed: shows when publishing is done
	wild := backend.InMemory("wild", hostileServer("wild", &wildSeen))
	wild.Resources.Allow = []string{"{+any}", "marker://*"} // the catch-all, explicitly allowed
	wild.Prompts.Deny = []string{"P"}
	cfg := config.Default()
	cfg.Server.CacheDir = t.TempDir()
	cfg.Server.ToolNames = config.ToolNamesAuto
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	g, err := build(cfg, app.Options{Runner: testPool(), Logger: slog.New(slog.DiscardHandler),
		ExtraSpecs: []backend.Spec{evil, wild}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := g.Start(ctx); err != nil {
		t.Fatal(err)
	}
	changed := make(chan struct{}, 64)
	cs := connect(t, g, &mcp.ClientOptions{ResourceListChangedHandler: func(context.Context, *mcp.ResourceListChangedRequest) { changed <- struct{}{} }})
	list := func() (uris, templates, prompts []string) {
		for r, err := range cs.Resources(ctx, nil) {
			if err != nil {
				t.Fatal(err)
			}
			uris = append(uris, r.URI)
		}
		for r, err := range cs.ResourceTemplates(ctx, nil) {
			if err != nil {
				t.Fatal(err)
			}
			templates = append(templates, r.URITemplate)
		}
		for p, err := range cs.Prompts(ctx, nil) {
			if err != nil {
				t.Fatal(err)
			}
			prompts = append(prompts, p.Name)
		}
		return
	}
	for {
		uris, templates, _ := list()
		if slices.Contains(uris, "marker://evil") && slices.Contains(uris, "marker://wild") && slices.Contains(templates, "{+any}") {
			break
		}
		select {
		case <-changed:
		case <-ctx.Done():
			t.Fatalf("the backends' resources were never published: %v %v", uris, templates)
		}
	}
	uris, templates, prompts := list()
	if slices.Contains(uris, "secret://x") {
		t.Errorf("a resource outside resources.allow (or of a backend whose tools are all denied) is listed: %v", uris)
	}
	if n := slices.Index(templates, "{+any}"); n < 0 || slices.Contains(templates[n+1:], "{+any}") {
		t.Errorf("the catch-all template is listed other than once (wild's): %v", templates)
	}
	if len(prompts) != 0 {
		t.Errorf("prompts of a backend whose tools are all denied (or denied by prompts.deny) are listed: %v", prompts)
	}
	for _, name := range []string{"evil__p", "p", "wild__p"} {
		if _, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: name}); err == nil {
			t.Errorf("prompts/get %s answered", name)
		}
	}
	for _, uri := range []string{"ISOGATE://nothing", "IsoGate://backends/../stats"} {
		if _, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri}); err == nil {
			t.Errorf("resources/read %s answered", uri)
		}
	}
	res, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "ISOGATE://stats"})
	if err != nil || len(res.Contents) != 1 || strings.Contains(res.Contents[0].Text, "from wild") {
		t.Errorf("ISOGATE://stats: %v %+v", err, res)
	}
	// What the catch-all of wild (explicitly allowed) serves: any URI but
	// isogate's, and not evil's.
	for _, uri := range []string{"file:///etc/passwd", "secret://x"} {
		if res, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri}); err != nil || res.Contents[0].Text != "from wild" {
			t.Errorf("the allowed catch-all, %s: %v", uri, err)
		}
	}
	if got := evilSeen.all(); len(got) != 0 {
		t.Errorf("the backend whose tools are all denied was asked: %v", got)
	}
	for _, r := range wildSeen.all() {
		if strings.Contains(strings.ToLower(r), "isogate:") || strings.HasPrefix(r, "prompt") {
			t.Errorf("wild was asked %q", r)
		}
	}
}
