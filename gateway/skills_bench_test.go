package gateway

import (
	"context"
	"log/slog"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/isogate/isogate/config"
	"github.com/isogate/isogate/internal/app"
	"github.com/isogate/isogate/internal/backend"
)

// BenchmarkSkills compares a host's skills/list and read of a SKILL.md
// through isogate (two declaring backends, in-process, listed at once)
// with the same requests sent directly to one backend (the floor), all
// over in-memory transports on 2026-07-28.
func BenchmarkSkills(b *testing.B) {
	var alphaSeen, betaSeen seen
	alphaServer := skillsBackend("alpha", &alphaSeen, map[string]skillFiles{"refunds": refundsSkill("alpha")})
	cfg := config.Default()
	cfg.Server.CacheDir = b.TempDir()
	g := startHealthy(b, cfg, app.Options{Runner: testPool(), Logger: slog.New(slog.DiscardHandler), ExtraSpecs: []backend.Spec{
		backend.InMemory("alpha", alphaServer),
		backend.InMemory("beta", skillsBackend("beta", &betaSeen, map[string]skillFiles{"refunds": refundsSkill("beta")}))}})
	ctx := context.Background()
	connectTo := func(s *mcp.Server) *mcp.ClientSession {
		st, ct := mcp.NewInMemoryTransports()
		if _, err := s.Connect(ctx, st, nil); err != nil {
			b.Fatal(err)
		}
		c := mcp.NewClient(&mcp.Implementation{Name: "host"}, nil)
		if err := addSkillMethods(c); err != nil {
			b.Fatal(err)
		}
		cs, err := c.Connect(ctx, ct, nil)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { cs.Close() })
		return cs
	}
	sessions := map[string]*mcp.ClientSession{"direct": connectTo(alphaServer), "isogate": connectTo(g.Server())}
	reads := map[string]string{"direct": "skill://refunds/SKILL.md", "isogate": "skill://alpha/refunds/SKILL.md"}
	for _, via := range []string{"direct", "isogate"} {
		cs := sessions[via]
		b.Run("list-"+via, func(b *testing.B) {
			for b.Loop() {
				if l, err := listSkills(ctx, cs); err != nil || len(l) == 0 {
					b.Fatal(l, err)
				}
			}
		})
		b.Run("read-"+via, func(b *testing.B) {
			for b.Loop() {
				if _, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: reads[via]}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
