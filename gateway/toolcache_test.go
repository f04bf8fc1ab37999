package gateway

import (
	"context"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/isogate/isogate/config"
	"github.com/isogate/isogate/internal/app"
	"github.com/isogate/isogate/internal/backend"
	"github.com/isogate/isogate/internal/resultstore/redistest"
	"github.com/isogate/isogate/internal/testutil"
)

// TestToolListCacheSharedOnRedis: with store.redis_url, replica A writes a
// backend's tool list to Redis (no cache file anywhere), and replica B, whose
// copy of the same backend cannot connect, serves that list at once. With
// Redis gone, a gateway still starts and says why its cache is unusable.
func TestToolListCacheSharedOnRedis(t *testing.T) {
	srv := redistest.ForTest(t)

	replica := func(spec backend.Spec, logs *testutil.Buffer) *Gateway {
		cfg := config.Default()
		cfg.Server.CacheDir = t.TempDir() // must stay unused: Redis holds the cache
		cfg.Store.RedisURL = srv.URL()
		cfg.RunCode.Enabled = false
		opts := app.Options{Runner: testPool(), ExtraSpecs: []backend.Spec{spec}, StartWait: 200 * time.Millisecond}
		if logs != nil {
			opts.Logger = slog.New(slog.NewTextHandler(logs, nil))
		}
		g, err := build(cfg, opts)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { g.Close() })
		g.Start(t.Context())
		return g
	}
	server := mcp.NewServer(&mcp.Implementation{Name: "weather"}, nil)
	mcp.AddTool(server, &mcp.Tool{Name: "forecast_by_city", Description: "Forecast for a city."},
		func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{}, nil, nil
		})
	a := replica(backend.InMemory("weather", server), nil)
	if err := a.app.Backends.WaitHealthy(t.Context()); err != nil {
		t.Fatal(err)
	}

	// Replica B: the same backend (a custom backend is identified by its
	// name), which never connects.
	dead := backend.Spec{Backend: config.Backend{Name: "weather", Transport: backend.TransportCustom},
		Dial: func(ctx context.Context) (mcp.Transport, error) {
			<-ctx.Done()
			return nil, ctx.Err()
		}}
	b := replica(dead, nil)
	res := b.app.Catalog.Search("forecast", searchOpts())
	if len(res.Hits) == 0 || res.Hits[0].Name != "weather.forecast_by_city" {
		t.Fatalf("replica B does not serve the tool list replica A cached in Redis: %+v", res)
	}
	for _, g := range []*Gateway{a, b} {
		if files, _ := filepath.Glob(filepath.Join(g.cfg.Server.CacheDir, backend.CacheSubdir, "*")); len(files) > 0 {
			t.Fatalf("cache files %v written beside Redis", files)
		}
	}

	srv.Kill()
	var logs testutil.Buffer
	c := replica(dead, &logs)
	if res := c.app.Catalog.Search("forecast", searchOpts()); len(res.Hits) != 0 {
		t.Fatalf("a tool list with Redis down: %+v", res)
	}
	if !strings.Contains(logs.String(), "tool cache (redis") {
		t.Fatalf("no log line says the Redis tool cache is unavailable:\n%s", logs.String())
	}
}
