package gateway

import (
	"context"
	"fmt"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/redis/go-redis/v9"

	"github.com/isogate/isogate/config"
	"github.com/isogate/isogate/internal/app"
	"github.com/isogate/isogate/internal/backend"
	"github.com/isogate/isogate/internal/resultstore/redistest"
)

// TestDurableJournalWritesLinearBytes: with sandbox.durable: all a run's
// journal is appended to, not rewritten: the bytes Redis receives
// (INFO stats total_net_input_bytes, on a redis-server of this test's
// own) grow linearly with the run's calls. Runs of 10, 55 and 100 calls
// through a 2026-07-28 client: the 45 calls from 55 to 100 cost about what
// the 45 from 10 to 55 cost (whole-journal rewrites made them cost 2.4
// times as much: O(n²)).
func TestDurableJournalWritesLinearBytes(t *testing.T) {
	srv := redistest.ForTest(t)
	counter := newCountingBackend()
	cfg := config.Default()
	cfg.Server.CacheDir = t.TempDir()
	cfg.Server.Stateless = true
	cfg.Store.RedisURL = srv.URL()
	cfg.Store.HMACKey = "durable-test-hmac-key-0123456789"
	cfg.Sandbox.Durable = "all"
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	g := startHealthy(t, cfg, app.Options{Runner: testPool(), ExtraSpecs: []backend.Spec{backend.InMemory("counter", counter.server)}})
	hs := httptest.NewServer(g.HTTPHandler())
	t.Cleanup(hs.Close)
	cs := roundTripClient(t, hs.URL+"/mcp")
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr})
	defer rdb.Close()
	received := func() int {
		info, err := rdb.Info(context.Background(), "stats").Result()
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(info, "\n") {
			if v, ok := strings.CutPrefix(strings.TrimSpace(line), "total_net_input_bytes:"); ok {
				n, _ := strconv.Atoi(v)
				return n
			}
		}
		t.Fatalf("no total_net_input_bytes in INFO stats:\n%s", info)
		return 0
	}
	run := func(calls int) int {
		before := received()
		code := fmt.Sprintf(`let s = 0; for (let i = 0; i < %d; i++) s += (await counter.bump({i, pad: "%s"})).n; return s`,
			calls, strings.Repeat("x", 100))
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "call_tool_chain", Arguments: map[string]any{"code": code}})
		if err != nil || res.IsError {
			t.Fatalf("run of %d calls: %v %+v", calls, err, res)
		}
		return received() - before
	}
	run(1) // the scripts loaded, the connections made
	b10, b55, b100 := run(10), run(55), run(100)
	first, second := b55-b10, b100-b55
	t.Logf("bytes Redis received: 10 calls %d, 55 calls %d, 100 calls %d (%d bytes per call from 55 to 100)", b10, b55, b100, second/45)
	if second > first*13/10 {
		t.Errorf("calls 56 to 100 wrote %d bytes, calls 11 to 55 %d: the journal's writes grow faster than its calls", second, first)
	}
}
