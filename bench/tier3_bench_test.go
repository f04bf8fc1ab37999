package bench

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/isogate/isogate/config"
	"github.com/isogate/isogate/internal/app"
	"github.com/isogate/isogate/internal/backend"
	"github.com/isogate/isogate/internal/codemode"
)

// BenchmarkTier3 measures tier-3 programs through the real engine
// (Engine.Execute, an in-process go-sdk backend) in both isolation modes,
// side by side: a trivial run, the direct backend call of 1 MB (the floor), and tool results of 1 MB and 10 MB crossing
// into V8 (and, for `mb-out`, back out as the program's result). Each
// sample starts after SampleGap at rest, as the report's latency rows do,
// so a worker's between-runs preparation is off the measured path only as
// far as it is for a real caller.
//
//	go test -run '^$' -bench Tier3 -benchtime 200x ./
func BenchmarkTier3(b *testing.B) {
	cases := []struct{ name, code, want string }{
		{"trivial", "const x = 1;\nreturn x", "1"},
		{"mb-in", "const r = await big.mb({});\nreturn r.items.length", ""},
		{"mb-out", "const r = await big.mb({});\nconst out = r;\nreturn out", ""},
		{"10mb-in", "const r = await big10.mb10({});\nreturn r.items.length", ""},
	}
	defer quietDefaultLogger()()
	for _, mode := range []config.Isolation{config.IsolationThread, config.IsolationProcess} {
		g, err := tier3Gateway(context.Background(), mode)
		if err != nil {
			b.Fatal(err)
		}
		// The floor: the same 1 MB call made directly on the backend.
		b.Run(fmt.Sprintf("mb-direct/%s", mode), func(b *testing.B) {
			ctx := context.Background()
			for b.Loop() {
				b.StopTimer()
				time.Sleep(SampleGap)
				b.StartTimer()
				if _, err := g.Backends.Call(ctx, "big", &mcp.CallToolParams{Name: "mb", Arguments: map[string]any{}}); err != nil {
					b.Fatal(err)
				}
			}
		})
		for _, c := range cases {
			if raceEnabled && c.name != "trivial" && c.name != "mb-in" {
				continue // the race detector slows these past the run deadline: `make bench` times them
			}
			b.Run(fmt.Sprintf("%s/%s", c.name, mode), func(b *testing.B) {
				ctx := context.Background()
				req := codemode.Request{Code: c.code}
				for range 3 { // warm: transform cache, worker contexts
					g.Engine.Execute(ctx, req)
				}
				for b.Loop() {
					b.StopTimer()
					time.Sleep(SampleGap) // at rest between requests, like the report's samples
					b.StartTimer()
					r := g.Engine.Execute(ctx, req)
					if r.IsError || (c.want != "" && r.Text != c.want) {
						b.Fatalf("%s: %.200s", c.code, r.Text)
					}
				}
			})
		}
		g.Close()
	}
}

// quietDefaultLogger sends slog.Default (the gateway's per-call log lines)
// to nowhere until the returned function restores it.
func quietDefaultLogger() func() {
	prev := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(io.Discard, nil)))
	return func() { slog.SetDefault(prev) }
}

// tier3Gateway is benchGateway with a 10 MB tool besides `small` and `mb`,
// and room for a 1 MB program result.
func tier3Gateway(ctx context.Context, mode config.Isolation) (*app.App, error) {
	return benchGateway(ctx, mode, bigBackend(), tenMBBackend())
}

// tenMBBackend serves `mb10`: about 10 MB of JSON records.
func tenMBBackend() backend.Spec {
	var doc strings.Builder
	doc.WriteString(`{"items":[`)
	for i := 0; doc.Len() < 10<<20; i++ {
		if i > 0 {
			doc.WriteByte(',')
		}
		fmt.Fprintf(&doc, `{"id":%d,"name":"item %d","price":%d.5,"tags":["a","b"],"ok":true}`, i, i, i)
	}
	doc.WriteString(`]}`)
	text := doc.String()
	srv := mcp.NewServer(&mcp.Implementation{Name: "big10"}, nil)
	mcp.AddTool(srv, &mcp.Tool{Name: "mb10", Description: "About 10 MB of JSON."},
		func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}, nil, nil
		})
	return backend.InMemory("big10", srv)
}
