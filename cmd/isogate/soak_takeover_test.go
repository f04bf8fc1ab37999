package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/isogate/isogate/internal/resultstore/redistest"
	"github.com/isogate/isogate/internal/testutil"
)

// TestSoakTakeover is the soak of issue 35 (not in make test: it runs only
// with ISOGATE_SOAK set to a duration, see bench/soak-takeover.sh): two
// replicas on one redis-server with sandbox.durable: all, 32 clients (4
// principals × 8) each starting call_tool_chain tasks of 5 backend calls
// (4 side effects and an idempotent wait between them) in a loop through either replica and reading their result through
// either, while one replica is SIGKILLed and restarted every
// ISOGATE_SOAK_KILL_EVERY (default 20s), alternately. Every task must end
// completed with its right answer or failed with a typed code, and the
// backend must never receive one call twice (every call of the soak has
// its own arguments; wait, idempotent, is sent again after a takeover).
func TestSoakTakeover(t *testing.T) {
	soak, err := time.ParseDuration(os.Getenv("ISOGATE_SOAK"))
	if err != nil {
		t.Skip("a soak: set ISOGATE_SOAK=3m (bench/soak-takeover.sh)")
	}
	killEvery := 20 * time.Second
	if d, err := time.ParseDuration(os.Getenv("ISOGATE_SOAK_KILL_EVERY")); err == nil {
		killEvery = d
	}
	srv := redistest.ForTest(t)
	backend := newCountingBackend(t, "")
	backend.work = 20 * time.Millisecond
	cfg := takeoverConfig(t, backend.url)
	principals := []string{"p0-soak-token-0123", "p1-soak-token-0123", "p2-soak-token-0123", "p3-soak-token-0123"}
	env := []string{"ISOGATE_SERVER__STATELESS=true", "ISOGATE_STORE__REDIS_URL=" + srv.URL(),
		"ISOGATE_STORE__HMAC_KEY=soak-hmac-key-0123456789", "ISOGATE_STORE__LEASE_TTL=" + cmpEnv("ISOGATE_SOAK_LEASE_TTL", "2s"),
		"ISOGATE_SANDBOX__DURABLE=all", "ISOGATE_SERVER__LOG_LEVEL=info",
		"ISOGATE_SANDBOX__MAX_CONCURRENT=32", "ISOGATE_SANDBOX__MAX_CONCURRENT_PER_PRINCIPAL=8",
		"ISOGATE_SERVER__TASKS__MAX_PER_PRINCIPAL=64", "ISOGATE_SERVER__AUTH__MODE=token"}
	for i, tok := range principals {
		env = append(env, fmt.Sprintf("ISOGATE_SERVER__AUTH__TOKENS__P%d__TOKEN=%s", i, tok))
	}

	// The two replica slots: a URL each, swapped when one is restarted.
	var urls [2]atomic.Pointer[string]
	var procs [2]*os.Process
	var logs []*testutil.Buffer // every replica's log, to count takeovers
	start := func() (string, *exec.Cmd) {
		url, cmd, l := startHTTPLogged(t, cfg, env...)
		logs = append(logs, l)
		return url, cmd
	}
	for i := range 2 {
		url, cmd := start()
		urls[i].Store(&url)
		procs[i] = cmd.Process
	}
	pick := func() string { return *urls[rand.IntN(2)].Load() }

	ctx, stop := context.WithTimeout(context.Background(), soak)
	defer stop()
	var kills atomic.Int64
	killerDone := make(chan struct{})
	go func() {
		defer close(killerDone)
		for slot := 0; ; slot = 1 - slot {
			select {
			case <-ctx.Done():
				return
			case <-time.After(killEvery):
			}
			_ = procs[slot].Signal(syscall.SIGKILL)
			_, _ = procs[slot].Wait()
			kills.Add(1)
			url, cmd := start()
			urls[slot].Store(&url)
			procs[slot] = cmd.Process
		}
	}()

	var (
		mu       sync.Mutex
		outcomes = map[string]int{}
		problems []string
		runs     atomic.Int64
		// done are the bases of the tasks that completed with their
		// right answer: each of their 4 steps must have reached the
		// backend.
		done []int
	)
	note := func(outcome string) {
		mu.Lock()
		outcomes[outcome]++
		mu.Unlock()
	}
	problem := func(format string, args ...any) {
		mu.Lock()
		problems = append(problems, fmt.Sprintf(format, args...))
		mu.Unlock()
	}
	code := regexp.MustCompile(`^([A-Z_]{6,}):`)
	var wg sync.WaitGroup
	for w := range 32 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			token := principals[w%len(principals)]
			for r := 0; ctx.Err() == nil; r++ {
				base := w*10_000_000 + r*10
				prog := fmt.Sprintf(`let s = 0;
for (let i = 1; i <= 2; i++) s += Number(await counter.step({n: %d + i}));
await counter.wait({});
for (let i = 3; i <= 4; i++) s += Number(await counter.step({n: %d + i}));
return "sum " + s;`, base, base)
				want := fmt.Sprintf("sum %d", 10*(4*base+10))
				raw, rerr, err := tryRPC(pick(), token, "tools/call", map[string]any{"name": "call_tool_chain",
					"arguments": map[string]any{"code": prog}, "task": map[string]any{"ttl": 600000}})
				if err != nil || rerr != nil {
					note("not created (the replica was down)")
					continue
				}
				var created struct{ Task taskState }
				if json.Unmarshal(raw, &created) != nil || created.Task.TaskID == "" {
					problem("CreateTaskResult: %s", raw)
					continue
				}
				runs.Add(1)
				id := created.Task.TaskID
				deadline := time.Now().Add(2 * time.Minute)
				for {
					if time.Now().After(deadline) {
						problem("task %s never ended", id)
						note("stuck")
						break
					}
					raw, rerr, err := tryRPC(pick(), token, "tasks/result", map[string]any{"taskId": id})
					if err != nil {
						continue // that replica died meanwhile: ask the other
					}
					if rerr != nil {
						problem("tasks/result %s: %+v", id, rerr)
						note("protocol error")
						break
					}
					var res struct {
						Content []struct{ Text string } `json:"content"`
						IsError bool                    `json:"isError"`
					}
					_ = json.Unmarshal(raw, &res)
					text := ""
					if len(res.Content) > 0 {
						text = res.Content[0].Text
					}
					switch m := code.FindStringSubmatch(text); {
					case !res.IsError && text == want:
						note("completed, right answer")
						mu.Lock()
						done = append(done, base)
						mu.Unlock()
					case res.IsError && m != nil:
						note("failed: " + m[1])
					default:
						problem("task %s: %s (want %q)", id, raw, want)
						note("wrong or untyped")
					}
					break
				}
			}
		}()
	}
	wg.Wait()
	<-killerDone

	backend.mu.Lock()
	calls, twice, missing := 0, 0, 0
	for _, base := range done {
		for i := 1; i <= 4; i++ {
			if backend.counts[fmt.Sprintf("step-%d", base+i)] == 0 {
				if missing++; missing <= 5 {
					problems = append(problems, fmt.Sprintf("task of base %d completed, its step %d never reached the backend", base, base+i))
				}
			}
		}
	}
	for key, n := range backend.counts {
		calls += n
		if n > 1 && key != "wait" { // wait is idempotent: sent again after a takeover
			twice++
			if twice <= 5 {
				problems = append(problems, fmt.Sprintf("backend call %s received %d times", key, n))
			}
		}
	}
	backend.mu.Unlock()
	for _, l := range logs {
		outcomes["takeovers: resumed by replay"] += strings.Count(l.String(), "resumed by replay")
		outcomes["takeovers: failed REPLICA_LOST"] += strings.Count(l.String(), "code=REPLICA_LOST")
		outcomes["takeovers: journal stopped, CALL_INDETERMINATE"] += strings.Count(l.String(), "its journal stopped, failed")
		outcomes["tasks ended TASK_EXPIRED (no lease)"] += strings.Count(l.String(), "code=TASK_EXPIRED")
	}
	var lines []string
	for o, n := range outcomes {
		lines = append(lines, fmt.Sprintf("  %-40s %d", o, n))
	}
	sort.Strings(lines)
	t.Logf("soak %s, a replica SIGKILLed and restarted every %s (%d kills): %d tasks, %d backend calls, %d received twice, %d missing from completed tasks\n%s",
		soak, killEvery, kills.Load(), runs.Load(), calls, twice, missing, strings.Join(lines, "\n"))
	for _, p := range problems[:min(20, len(problems))] {
		t.Error(p)
	}
}

func cmpEnv(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

// tryRPC is rawRPC that reports a transport failure (a replica that died)
// instead of failing the test.
func tryRPC(url, token, method string, params any) (json.RawMessage, *rpcError, error) {
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	return readRPCAnswer(method, resp)
}
