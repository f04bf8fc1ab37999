package gateway

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/isogate/isogate/config"
	"github.com/isogate/isogate/internal/app"
	"github.com/isogate/isogate/internal/backend"
	"github.com/isogate/isogate/internal/codemode"
	"github.com/isogate/isogate/internal/testutil"
)

// BenchmarkTiers compares the three call_tool_chain tiers over a trivial
// in-process tool with a direct backend call (the floor).
func BenchmarkTiers(b *testing.B) {
	h := newHarness(b, nil)
	ctx := context.Background()
	b.Run("backend-direct", func(b *testing.B) {
		for b.Loop() {
			if _, err := h.g.app.Backends.Call(ctx, "local-backend", &mcp.CallToolParams{Name: "noop", Arguments: map[string]any{"x": 1}}); err != nil {
				b.Fatal(err)
			}
		}
	})
	for name, code := range map[string]string{
		"tier1-direct-json": `{"tool": "local-backend.noop", "arguments": {"x": 1}}`,
		"tier2-simple-call": `return await local_backend.noop({x: 1})`,
		"tier3-v8":          `const args = {x: 1}; return await local_backend.noop(args)`,
	} {
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				if r := h.g.app.Engine.Execute(ctx, codemode.Request{Code: code}); r.IsError {
					b.Fatal(r.Text)
				}
			}
		})
	}
}

// BenchmarkStartupWithCache measures how long a fresh gateway takes to
// answer searches when the tool cache is warm (the backend still starting)
// versus cold (waiting for the real server-everything to connect).
func BenchmarkStartupWithCache(b *testing.B) {
	cacheDir := b.TempDir()
	cfg := func() *config.Config {
		c := config.Default()
		c.Server.CacheDir = cacheDir
		c.Backends = map[string]config.Backend{"everything": {Name: "everything", Transport: config.TransportStdio,
			Command: "node", Args: []string{everythingPath(b), "stdio"}, Timeout: 10 * time.Second, MaxConcurrentCalls: 8}}
		return c
	}
	firstTools := func(b *testing.B) time.Duration {
		start := time.Now()
		g, err := build(cfg(), app.Options{Runner: testPool()})
		if err != nil {
			b.Fatal(err)
		}
		defer g.Close()
		g.Start(context.Background())
		// Polling at a fine grain is the measurement: nothing signals the
		// catalogue's first tools, whether from the cache or the backend.
		for g.app.Catalog.Count() == 0 {
			if time.Since(start) > 30*time.Second {
				b.Fatal("no tools after 30s")
			}
			time.Sleep(100 * time.Microsecond)
		}
		return time.Since(start)
	}
	b.Run("cold", func(b *testing.B) {
		for b.Loop() {
			b.StopTimer()
			_ = removeCache(cacheDir)
			b.StartTimer()
			firstTools(b)
		}
	})
	b.Run("warm-cache", func(b *testing.B) {
		firstTools(b) // writes the cache
		testutil.Eventually(b, 30*time.Second, func() bool {
			files, _ := filepath.Glob(filepath.Join(cacheDir, backend.CacheSubdir, "*.json"))
			return len(files) > 0
		}, "the tool-list cache to be written")
		for b.Loop() {
			firstTools(b)
		}
	})
}
