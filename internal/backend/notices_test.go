package backend

import (
	"context"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestNotificationsBeforeTheResult: the progress and log messages a
// backend sends during a call have all been handed to OnProgress and OnLog
// when Call returns (the SDK runs notification handlers from a queue a
// response can overtake), and the manager asked the backend for its logs
// (logging/setLevel), or it would have sent none.
func TestNotificationsBeforeTheResult(t *testing.T) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "noisy"}, nil)
	const n = 50
	mcp.AddTool(srv, &mcp.Tool{Name: "noisy"}, func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
		for i := range n {
			_ = req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: req.Params.GetProgressToken(), Progress: float64(i)})
			_ = req.Session.Log(ctx, &mcp.LoggingMessageParams{Level: "debug", Data: i})
		}
		return textResult("done"), nil, nil
	})
	var mu sync.Mutex
	progress, logs := 0, 0
	m := startManager(t, Options{
		Specs: []Spec{inProcess("noisy", srv)},
		OnProgress: func(backend string, p *mcp.ProgressNotificationParams) {
			mu.Lock()
			progress++
			mu.Unlock()
		},
		OnLog: func(backend string, p *mcp.LoggingMessageParams) {
			mu.Lock()
			logs++
			mu.Unlock()
		},
	})
	waitHealthy(t, m)
	for round := 1; round <= 5; round++ {
		// 2025-11-25 sessions log at the level set by logging/setLevel;
		// 2026-07-28 ones at the level in the request's _meta.
		res, err := m.Call(context.Background(), "noisy", &mcp.CallToolParams{Name: "noisy",
			Meta: mcp.Meta{"progressToken": "p", mcp.MetaKeyLogLevel: "debug"}})
		if err != nil || resultText(t, res) != "done" {
			t.Fatalf("call: %v", err)
		}
		mu.Lock()
		p, l := progress, logs
		mu.Unlock()
		if p != round*n || l != round*n {
			t.Fatalf("round %d: when Call returned, %d progress and %d log notifications were handled, want %d each", round, p, l, round*n)
		}
	}
}
