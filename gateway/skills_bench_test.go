package gateway

import (
	"context"
	"errors"
	"log/slog"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/isogate/isogate/config"
	"github.com/isogate/isogate/internal/app"
	"github.com/isogate/isogate/internal/backend"
)

// BenchmarkSkills compares a host's skills/list and read of a SKILL.md
// through isogate (two declaring backends, in-process, listed at once)
// with the same requests sent directly to one backend (the floor), all
// over in-memory transports on 2026-07-28, alternating in every iteration.
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
	direct, via := connectTo(alphaServer), connectTo(g.Server())
	// Each iteration sends the request directly, then through isogate, so
	// that both see the same load; the per-op times and their ratio are
	// reported as metrics.
	measure := func(b *testing.B, op func(cs *mcp.ClientSession, isogate bool) error) {
		var d, i time.Duration
		for b.Loop() {
			start := time.Now()
			if err := op(direct, false); err != nil {
				b.Fatal(err)
			}
			mid := time.Now()
			if err := op(via, true); err != nil {
				b.Fatal(err)
			}
			d, i = d+mid.Sub(start), i+time.Since(mid)
		}
		b.ReportMetric(float64(d.Microseconds())/float64(b.N), "direct-µs/op")
		b.ReportMetric(float64(i.Microseconds())/float64(b.N), "isogate-µs/op")
		b.ReportMetric(float64(i)/float64(d), "ratio")
	}
	b.Run("list", func(b *testing.B) {
		measure(b, func(cs *mcp.ClientSession, _ bool) error {
			l, err := listSkills(ctx, cs)
			if err == nil && len(l) == 0 {
				err = errors.New("no skills listed")
			}
			return err
		})
	})
	b.Run("read", func(b *testing.B) {
		measure(b, func(cs *mcp.ClientSession, isogate bool) error {
			uri := "skill://refunds/SKILL.md"
			if isogate {
				uri = "skill://alpha/refunds/SKILL.md"
			}
			_, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
			return err
		})
	})
}
