package gateway

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/isogate/isogate/config"
	"github.com/isogate/isogate/internal/app"
	"github.com/isogate/isogate/internal/backend"
	"github.com/isogate/isogate/internal/testutil"
)

// TestResourceClaimedByTwoBackends: a URI two backends offer is served by the
// first in configuration order, and the conflict is logged once although the
// resource lists are published again.
func TestResourceClaimedByTwoBackends(t *testing.T) {
	const uri = "test://shared"
	add := func(s *mcp.Server, uri, text string) {
		s.AddResource(&mcp.Resource{URI: uri, Name: uri}, func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: uri, Text: text}}}, nil
		})
	}
	// beta offers the URI from the start; alpha, first in configuration
	// order, offers it only later, and must then take it over.
	alpha := mcp.NewServer(&mcp.Implementation{Name: "alpha"}, nil)
	add(alpha, "test://alpha-only", "a")
	beta := mcp.NewServer(&mcp.Implementation{Name: "beta"}, nil)
	add(beta, uri, "from beta")
	cfg := config.Default()
	cfg.Server.CacheDir = t.TempDir()
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	var logs testutil.Buffer
	g, err := build(cfg, app.Options{Runner: testPool(), Logger: slog.New(slog.NewTextHandler(&logs, nil)),
		ExtraSpecs: []backend.Spec{backend.InMemory("alpha", alpha), backend.InMemory("beta", beta)}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.Close() })
	if err := g.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := g.app.Backends.WaitHealthy(ctx); err != nil {
		t.Fatal(err)
	}
	changed := make(chan struct{}, 16)
	cs := connect(t, g, &mcp.ClientOptions{ResourceListChangedHandler: func(context.Context, *mcp.ResourceListChangedRequest) { changed <- struct{}{} }})
	listed := func(want string) bool {
		res, err := cs.ListResources(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range res.Resources {
			if r.URI == want {
				return true
			}
		}
		return false
	}
	waitListed := func(want string) {
		for !listed(want) {
			select {
			case <-changed:
			case <-ctx.Done():
				t.Fatalf("%s never listed", want)
			}
		}
	}
	read := func() string {
		t.Helper()
		res, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Contents) != 1 {
			t.Fatalf("read %s: %d contents", uri, len(res.Contents))
		}
		return res.Contents[0].Text
	}
	waitListed(uri)
	waitListed("test://alpha-only")
	if got := read(); got != "from beta" {
		t.Errorf("read %s before alpha offers it: %q, want beta's", uri, got)
	}
	add(alpha, uri, "from alpha")
	add(alpha, "test://alpha-2", "a2") // listed after uri: an event to wait for
	waitListed("test://alpha-2")
	// Publish again: beta gains a resource.
	add(beta, "test://beta-only", "b")
	waitListed("test://beta-only")
	if got := read(); got != "from alpha" {
		t.Errorf("read %s: %q, want alpha's (first in configuration order)", uri, got)
	}
	if n := strings.Count(logs.String(), "both offer "+uri); n != 1 {
		t.Errorf("conflict logged %d times, want once:\n%s", n, logs.String())
	}
}
