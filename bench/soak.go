package bench

import (
	"bufio"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/isogate/isogate/config"
)

// soakConfig is what one soak does.
type soakConfig struct {
	Mode     config.Isolation
	Sessions int   // HTTP sessions, each its own client looping over soakPrograms
	Runs     int64 // call_tool_chain runs in all
	// Every is the number of runs between two memory samples.
	Every int64
}

// soakSample is the memory of the soak's gateway after Runs runs.
type soakSample struct {
	Runs int64
	// RSS and PSS are of the gateway process and its descendants (the
	// sandbox worker processes) summed, in bytes; GatewayRSS the gateway
	// process's own.
	RSS, PSS, GatewayRSS int64
	// HeapInuse, HeapAlloc and Sys are the gateway's runtime.MemStats.
	HeapInuse, HeapAlloc, Sys uint64
	// Procs is the number of processes counted.
	Procs int
}

// soakPrograms are the call_tool_chain programs the soak's clients cycle
// through: tier 1 and 2 (no sandbox), tier 3 with calls and compute, an
// error, and a result over the chunk threshold (kept in the result store).
var soakPrograms = []string{
	"return 1",
	`return await srv.echo({text: "hi"})`,
	`const r = await srv.echo({i: 1}); const s = await srv.echo({i: 2}); return [r, s]`,
	`let t = 0; for (let i = 0; i < 2000; i++) t += i; return t`,
	`const xs = await Promise.all([1, 2, 3].map((i) => srv.echo({i}))); return xs.length`,
	`throw new Error("soak")`,
	`const b = await srv.big({}); return b`,
	`return Array.from({length: 50}, (_, i) => ({i, s: "x".repeat(i)}))`,
}

// runSoak starts a soak gateway in a child process of this binary (which
// must call [ServeWorkerIfRequested]) and sends cfg.Runs call_tool_chain
// runs over cfg.Sessions HTTP sessions, sampling the child's memory every
// cfg.Every runs (after a garbage collection in the gateway, so the Go
// figures are live heap, not garbage awaiting collection).
func runSoak(ctx context.Context, cfg soakConfig, progress func(soakSample)) ([]soakSample, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("soak: %w", err)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	cmd := exec.CommandContext(ctx, self, soakGatewayArg, string(cfg.Mode))
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, fmt.Errorf("soak: %w", err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, fmt.Errorf("soak: %w", err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("soak gateway: %w", err)
	}
	defer func() {
		stdin.Close()
		_ = cmd.Wait()
	}()
	base, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		return nil, fmt.Errorf("soak gateway did not start: %w", err)
	}
	base = strings.TrimSpace(base)
	pid := cmd.Process.Pid

	hc := &http.Client{Transport: &http.Transport{MaxIdleConns: 4 * cfg.Sessions, MaxIdleConnsPerHost: 4 * cfg.Sessions}}
	sessions := make([]*mcp.ClientSession, cfg.Sessions)
	for i := range sessions {
		c := mcp.NewClient(&mcp.Implementation{Name: "soak-" + strconv.Itoa(i)}, nil)
		cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: base + "/mcp", HTTPClient: hc}, nil)
		if err != nil {
			return nil, fmt.Errorf("soak session %d: %w", i, err)
		}
		defer cs.Close()
		sessions[i] = cs
	}

	sample := func(runs int64) (soakSample, error) {
		s := soakSample{Runs: runs}
		resp, err := hc.Get(base + "/debug/gc")
		if err != nil {
			return s, fmt.Errorf("soak memstats: %w", err)
		}
		var ms runtime.MemStats
		err = json.NewDecoder(resp.Body).Decode(&ms)
		resp.Body.Close()
		if err != nil {
			return s, fmt.Errorf("soak memstats: %w", err)
		}
		s.HeapInuse, s.HeapAlloc, s.Sys = ms.HeapInuse, ms.HeapAlloc, ms.Sys
		s.RSS, s.Procs = pidTreeRSS(pid)
		s.PSS = pidTreePSS(pid)
		s.GatewayRSS = statusRSS(strconv.Itoa(pid))
		return s, nil
	}

	var (
		next    atomic.Int64 // the next run's number
		mu      sync.Mutex
		samples []soakSample
		failure error
	)
	first, err := sample(0)
	if err != nil {
		return nil, err
	}
	samples = append(samples, first)
	if progress != nil {
		progress(first)
	}
	// gate holds every client while a sample is taken, so that a sample
	// sees the memory at a run count and not mid-burst.
	var gate sync.RWMutex
	var wg sync.WaitGroup
	for i, cs := range sessions {
		wg.Go(func() {
			for {
				gate.RLock()
				n := next.Add(1)
				if n > cfg.Runs || ctx.Err() != nil {
					gate.RUnlock()
					return
				}
				code := soakPrograms[(int(n)+i)%len(soakPrograms)]
				res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "call_tool_chain", Arguments: map[string]any{"code": code}})
				gate.RUnlock()
				if err == nil && res.IsError && !strings.Contains(code, "throw") {
					err = fmt.Errorf("run %q failed: %s", code, resultText(res))
				}
				if err != nil {
					mu.Lock()
					failure = errors.Join(failure, err)
					mu.Unlock()
					cancel()
					return
				}
				if n%cfg.Every == 0 {
					gate.Lock()
					s, err := sample(n)
					gate.Unlock()
					mu.Lock()
					if err != nil {
						failure = errors.Join(failure, err)
					} else {
						samples = append(samples, s)
						if progress != nil {
							progress(s)
						}
					}
					mu.Unlock()
				}
			}
		})
	}
	wg.Wait()
	slices.SortFunc(samples, func(a, b soakSample) int { return cmp.Compare(a.Runs, b.Runs) })
	if path := os.Getenv("ISOGATE_SOAK_HEAP_PROFILE"); path != "" && failure == nil {
		failure = saveHeapProfile(hc, base, path)
	}
	return samples, failure
}

// saveHeapProfile writes the soak gateway's heap profile (after a garbage
// collection) to path, for `go tool pprof`.
func saveHeapProfile(hc *http.Client, base, path string) error {
	resp, err := hc.Get(base + "/debug/pprof/heap?gc=1")
	if err != nil {
		return fmt.Errorf("soak heap profile: %w", err)
	}
	defer resp.Body.Close()
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("soak heap profile: %w", err)
	}
	if _, err := io.Copy(f, resp.Body); err != nil {
		f.Close()
		return fmt.Errorf("soak heap profile: %w", err)
	}
	return f.Close()
}

// resultText is the text content of a tool result.
func resultText(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			b.WriteString(t.Text)
		}
	}
	return truncate(b.String(), 200)
}

// pidTreeRSS returns the resident memory of pid and its descendants in
// bytes, and how many processes that is.
func pidTreeRSS(pid int) (total int64, procs int) {
	total = statusRSS(strconv.Itoa(pid))
	kids := descendants(pid)
	for _, k := range kids {
		total += statusRSS(strconv.Itoa(k))
	}
	return total, 1 + len(kids)
}

// pidTreePSS returns the proportional set size of pid and its
// descendants in bytes.
func pidTreePSS(pid int) int64 {
	total := smapsPSS(strconv.Itoa(pid))
	for _, k := range descendants(pid) {
		total += smapsPSS(strconv.Itoa(k))
	}
	return total
}
