package bench

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/isogate/isogate/internal/resultstore/redistest"
)

// sessionsConfig is what one thousand-sessions ramp does.
type sessionsConfig struct {
	// Bin is the isogate binary the two replicas run.
	Bin string
	// Steps are the numbers of client sessions held at once, in order;
	// the ramp stops after the first step with errors or an exploded p99.
	Steps []int
	// Hold is how long each step is measured once its sessions are open.
	Hold time.Duration
	// Every is each session's pace: one call_tool_chain run per Every.
	Every time.Duration
	// Stateful runs the replicas with protocol sessions (server.stateless
	// false); else they are stateless and 2025-11-25 clients get a
	// temporary session per request.
	Stateful bool
	// Overrides are the configuration variables (ISOGATE_SANDBOX__… and
	// the like) the replicas inherit from the environment, for the report.
	Overrides []string
}

// sessionsStep is what one step of the ramp measured.
type sessionsStep struct {
	Sessions int
	// Runs are the runs that ended within the step's hold, plus its
	// errors; Errors those that failed (an error, a wrong answer, or a
	// refused session), from the start of the step's ramp to the end of
	// its hold.
	Runs, Errors int
	// FirstErrors are up to three of the errors, for the report.
	FirstErrors []string
	// P50 and P99 are the latencies of the step's runs; Max the longest.
	P50, P99, Max time.Duration
	// RunsPerSec is Runs over the hold.
	RunsPerSec float64
	// RSS is each replica's own resident memory; TreeRSS with its sandbox
	// worker processes; FDs its open file descriptors (/proc/PID/fd).
	RSS, TreeRSS [2]int64
	FDs          [2]int
	// ClientCPU is the bench process's CPU (the clients and the backend)
	// over the hold ÷ the hold; MachineBusy the share of all the
	// machine's CPU time that was not idle over the hold (/proc/stat).
	ClientCPU, MachineBusy float64
	// GatewayRun is the mean duration of the replicas' tier-3 runs over
	// the hold, as they time them (isogate_run_duration_seconds{tier="v8"}).
	GatewayRun time.Duration
	// RedisMemory is redis-server's used_memory (INFO memory).
	RedisMemory int64
	// CPU is each replica's CPU time (with its sandbox workers') over
	// the hold ÷ the hold (1 = one core busy).
	CPU [2]float64
}

// sessionsConnecting bounds the sessions connecting at once during a ramp.
const sessionsConnecting = 32

// sessionsProtocols are the protocol versions the clients ask for, taken
// in turn: half stateless 2026-07-28 clients, half 2025-11-25 sessions.
var sessionsProtocols = []string{"2026-07-28", "2025-11-25"}

// sessionsProgram is the small program each session runs: one backend
// call (tier 3) and a little compute; its answer carries n back.
func sessionsProgram(n int64) string {
	return fmt.Sprintf(`const r = await srv.echo({n: %d}); let t = 0; for (let i = 0; i < 100; i++) t += i; return {r, t}`, n)
}

// sessionsExplodes reports whether a step's p99 has exploded against the
// first step's: over ten times it and over a second.
func sessionsExplodes(first, step sessionsStep) bool {
	return step.P99 > time.Second && step.P99 > 10*first.P99
}

// sessionsReplica is one isogate replica process.
type sessionsReplica struct {
	cmd  *exec.Cmd
	addr string
}

// runSessions starts a redis-server, an echo backend and two isogate
// replicas of cfg.Bin on it, then ramps up client sessions through
// cfg.Steps, each running sessionsProgram every cfg.Every, and measures
// each step for cfg.Hold.
func runSessions(ctx context.Context, cfg sessionsConfig, progress func(sessionsStep)) ([]sessionsStep, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	rds, err := redistest.Start()
	if err != nil {
		return nil, fmt.Errorf("sessions: redis: %w", err)
	}
	defer rds.Stop()
	backendURL, stopBackend, err := serveEchoBackend()
	if err != nil {
		return nil, err
	}
	defer stopBackend()
	dir, err := os.MkdirTemp("", "isogate-sessions")
	if err != nil {
		return nil, fmt.Errorf("sessions: %w", err)
	}
	defer os.RemoveAll(dir)
	cfgPath := filepath.Join(dir, "isogate.yaml")
	// One principal (no authentication: loopback), so that no fair share
	// between principals refuses the load; a backend call bound only by
	// the backend's own max_concurrent_calls.
	yaml := fmt.Sprintf("server:\n  cache_dir: %s\n  log_level: error\nbackends:\n  srv:\n    url: %s\n", filepath.Join(dir, "cache"), backendURL)
	if err := os.WriteFile(cfgPath, []byte(yaml), 0o600); err != nil {
		return nil, fmt.Errorf("sessions: %w", err)
	}
	env := append(os.Environ(), "ISOGATE_STORE__REDIS_URL="+rds.URL(), "ISOGATE_SERVER__STATELESS="+strconv.FormatBool(!cfg.Stateful))
	var replicas [2]sessionsReplica
	for i := range replicas {
		r, err := startReplica(ctx, cfg.Bin, cfgPath, env)
		if err != nil {
			return nil, err
		}
		defer func() {
			_ = r.cmd.Process.Signal(os.Interrupt)
			_ = r.cmd.Wait()
		}()
		replicas[i] = r
	}

	tr := &http.Transport{MaxIdleConns: 0, MaxIdleConnsPerHost: 4 * slices.Max(cfg.Steps), IdleConnTimeout: time.Minute}
	defer tr.CloseIdleConnections()
	var (
		mu        sync.Mutex
		latencies []time.Duration
		errs      []string
		errCount  int
		measuring bool // latencies are kept during a step's hold only
		runs      atomic.Int64
	)
	fail := func(err error) {
		mu.Lock()
		errCount++
		if len(errs) < 3 {
			errs = append(errs, truncate(err.Error(), 160))
		}
		mu.Unlock()
	}
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel()
	// session runs one client: connect, then a run every cfg.Every (from
	// a random offset, so that the sessions do not run in step).
	connected := make(chan struct{}, slices.Max(cfg.Steps))
	connecting := make(chan struct{}, sessionsConnecting)
	session := func(i int) {
		defer wg.Done()
		version := sessionsProtocols[i%len(sessionsProtocols)]
		var hc *http.Client
		if version == "2026-07-28" && !cfg.Stateful {
			// Stateless: every request to either replica.
			var turn atomic.Int64
			hc = &http.Client{Transport: roundTripFunc(func(req *http.Request) (*http.Response, error) {
				req = req.Clone(req.Context())
				req.URL.Host = replicas[turn.Add(1)%2].addr
				return tr.RoundTrip(req)
			})}
		} else {
			hc = &http.Client{Transport: tr}
		}
		c := mcp.NewClient(&mcp.Implementation{Name: "sessions-" + strconv.Itoa(i)}, nil)
		connecting <- struct{}{}
		cctx, ccancel := context.WithTimeout(ctx, time.Minute)
		// Pinned: each protocol version's clients half on each replica.
		cs, err := c.Connect(cctx, &mcp.StreamableClientTransport{Endpoint: "http://" + replicas[(i/len(sessionsProtocols))%2].addr + "/mcp", HTTPClient: hc},
			&mcp.ClientSessionOptions{ProtocolVersion: version})
		ccancel()
		<-connecting
		connected <- struct{}{}
		if err != nil {
			if ctx.Err() == nil {
				fail(fmt.Errorf("session %d (%s) connect: %w", i, version, err))
			}
			return
		}
		defer cs.Close()
		next := time.Now().Add(time.Duration(rand.Int64N(int64(cfg.Every))))
		for {
			t := time.NewTimer(time.Until(next)) // the session's pace, not a synchronisation
			select {
			case <-ctx.Done():
				t.Stop()
				return
			case <-t.C:
			}
			next = next.Add(cfg.Every)
			if d := time.Until(next); d < 0 {
				next = time.Now() // behind: run again at once, skip what was missed
			}
			n := runs.Add(1)
			rctx, rcancel := context.WithTimeout(ctx, time.Minute)
			start := time.Now()
			res, err := cs.CallTool(rctx, &mcp.CallToolParams{Name: "call_tool_chain", Arguments: map[string]any{"code": sessionsProgram(n)}})
			took := time.Since(start)
			rcancel()
			if ctx.Err() != nil {
				return
			}
			switch want := fmt.Sprintf(`"n":%d}`, n); {
			case err != nil:
				fail(fmt.Errorf("session %d (%s): %w", i, version, err))
			case res.IsError || !strings.Contains(strings.Join(strings.Fields(resultText(res)), ""), want):
				fail(fmt.Errorf("session %d (%s): %s", i, version, strings.Join(strings.Fields(resultText(res)), " ")))
			default:
				mu.Lock()
				if measuring {
					latencies = append(latencies, took)
				}
				mu.Unlock()
			}
		}
	}

	var steps []sessionsStep
	open := 0
	for _, target := range cfg.Steps {
		mu.Lock()
		latencies, errs, errCount = nil, nil, 0
		mu.Unlock()
		for ; open < target; open++ {
			wg.Add(1)
			go session(open)
		}
		// Wait until every new session has connected (or failed to).
		if err := waitConnected(ctx, connected, target-stepsOpen(steps)); err != nil {
			return steps, err
		}
		mu.Lock()
		latencies = nil
		measuring = true
		mu.Unlock()
		before := [2]float64{procCPU(replicas[0].cmd.Process.Pid), procCPU(replicas[1].cmd.Process.Pid)}
		clientsBefore := statCPU(os.Getpid(), false)
		busyBefore, allBefore := machineCPU()
		var metricsBefore [2]gatewayMetrics
		for i, r := range replicas {
			metricsBefore[i] = scrapeMetrics(r.addr)
		}
		select {
		case <-ctx.Done():
			return steps, ctx.Err()
		case <-time.After(cfg.Hold): // the measurement window
		}
		mu.Lock()
		measuring = false
		st := sessionsStep{Sessions: target, Runs: len(latencies) + errCount, Errors: errCount, FirstErrors: slices.Clone(errs)}
		lat := slices.Clone(latencies)
		mu.Unlock()
		slices.Sort(lat)
		if len(lat) > 0 {
			st.P50, st.P99, st.Max = lat[len(lat)/2], lat[min(len(lat)-1, len(lat)*99/100)], lat[len(lat)-1]
		}
		st.RunsPerSec = float64(st.Runs) / cfg.Hold.Seconds()
		for i, r := range replicas {
			pid := r.cmd.Process.Pid
			st.RSS[i] = statusRSS(strconv.Itoa(pid))
			st.TreeRSS[i], _ = pidTreeRSS(pid)
			st.FDs[i] = countFDs(pid)
			st.CPU[i] = (procCPU(pid) - before[i]) / cfg.Hold.Seconds()
		}
		st.RedisMemory, _ = redisUsedMemory(rds.Addr)
		st.ClientCPU = (statCPU(os.Getpid(), false) - clientsBefore) / cfg.Hold.Seconds()
		if busy, all := machineCPU(); all > allBefore {
			st.MachineBusy = (busy - busyBefore) / (all - allBefore)
		}
		var runSum, runN float64
		for i, r := range replicas {
			m := scrapeMetrics(r.addr)
			runSum += m.RunSum - metricsBefore[i].RunSum
			runN += m.RunCount - metricsBefore[i].RunCount
		}
		if runN > 0 {
			st.GatewayRun = time.Duration(runSum / runN * float64(time.Second))
		}
		steps = append(steps, st)
		if progress != nil {
			progress(st)
		}
		if st.Errors > 0 || sessionsExplodes(steps[0], st) {
			break
		}
	}
	return steps, nil
}

// stepsOpen is the number of sessions the steps so far opened.
func stepsOpen(steps []sessionsStep) int {
	if len(steps) == 0 {
		return 0
	}
	return steps[len(steps)-1].Sessions
}

// waitConnected waits for n sessions to report their connection.
func waitConnected(ctx context.Context, connected <-chan struct{}, n int) error {
	for range n {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-connected:
		}
	}
	return nil
}

// roundTripFunc is an http.RoundTripper of a function.
type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// startReplica starts `bin serve --config cfgPath --http ADDR` on a free
// loopback port and waits until it answers /healthz.
func startReplica(ctx context.Context, bin, cfgPath string, env []string) (sessionsReplica, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return sessionsReplica{}, fmt.Errorf("sessions: %w", err)
	}
	addr := ln.Addr().String()
	ln.Close()
	cmd := exec.Command(bin, "serve", "--config", cfgPath, "--http", addr)
	cmd.Env = env
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		return sessionsReplica{}, fmt.Errorf("sessions: starting %s: %w", bin, err)
	}
	deadline := time.Now().Add(time.Minute)
	for {
		resp, err := http.Get("http://" + addr + "/healthz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return sessionsReplica{cmd: cmd, addr: addr}, nil
			}
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
			return sessionsReplica{}, fmt.Errorf("sessions: replica on %s did not get healthy: %v", addr, err)
		}
		time.Sleep(50 * time.Millisecond) // polling a child process's start
	}
}

// serveEchoBackend serves an MCP backend over streamable HTTP on a
// loopback port: `echo` returns its arguments as structured content.
func serveEchoBackend() (url string, stop func(), err error) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "srv"}, nil)
	mcp.AddTool(srv, &mcp.Tool{Name: "echo", Description: "Returns its arguments."},
		func(_ context.Context, _ *mcp.CallToolRequest, in map[string]any) (*mcp.CallToolResult, map[string]any, error) {
			return nil, in, nil
		})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, fmt.Errorf("sessions backend: %w", err)
	}
	hs := &http.Server{Handler: mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)}
	go hs.Serve(ln)
	return "http://" + ln.Addr().String() + "/mcp", func() { hs.Close() }, nil
}

// countFDs is the number of open file descriptors of pid.
func countFDs(pid int) int {
	entries, err := os.ReadDir(filepath.Join("/proc", strconv.Itoa(pid), "fd"))
	if err != nil {
		return 0
	}
	return len(entries)
}

// procCPU is the CPU time (user + system) pid has used, in seconds, with
// its children's: those it has reaped, and its live descendants (the
// sandbox worker processes).
func procCPU(pid int) float64 {
	total := statCPU(pid, true)
	for _, k := range descendants(pid) {
		total += statCPU(k, false)
	}
	return total
}

// statCPU reads a process's CPU time from /proc/PID/stat in seconds:
// utime + stime, and cutime + cstime (reaped children) when reaped.
func statCPU(pid int, reaped bool) float64 {
	data, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return 0
	}
	// The fields after the command, which may hold spaces, in parentheses.
	s := string(data)
	fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(fields) < 15 {
		return 0
	}
	idx := []int{11, 12}
	if reaped {
		idx = append(idx, 13, 14)
	}
	var ticks float64
	for _, i := range idx {
		v, _ := strconv.ParseFloat(fields[i], 64)
		ticks += v
	}
	return ticks / 100 // clock ticks: USER_HZ is 100 on Linux
}

// machineCPU returns the machine's busy and total CPU time in clock
// ticks (the first line of /proc/stat; idle and iowait are not busy).
func machineCPU() (busy, total float64) {
	data, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, 0
	}
	line, _, _ := strings.Cut(string(data), "\n")
	for i, f := range strings.Fields(line)[1:] {
		v, _ := strconv.ParseFloat(f, 64)
		if i >= 8 { // guest time is counted in user already
			break
		}
		total += v
		if i != 3 && i != 4 {
			busy += v
		}
	}
	return busy, total
}

// gatewayMetrics are the sum and count of a replica's tier-3 run
// duration histogram.
type gatewayMetrics struct{ RunSum, RunCount float64 }

// scrapeMetrics reads a replica's /metrics (zero on any error).
func scrapeMetrics(addr string) gatewayMetrics {
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		return gatewayMetrics{}
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return gatewayMetrics{}
	}
	return parseGatewayMetrics(string(body))
}

// parseGatewayMetrics reads the histograms gatewayMetrics holds from
// Prometheus text.
func parseGatewayMetrics(text string) gatewayMetrics {
	var m gatewayMetrics
	for line := range strings.SplitSeq(text, "\n") {
		name, value, ok := strings.Cut(line, " ")
		if !ok {
			continue
		}
		v, err := strconv.ParseFloat(strings.TrimSpace(value), 64)
		if err != nil {
			continue
		}
		switch name {
		case `isogate_run_duration_seconds_sum{tier="v8"}`:
			m.RunSum = v
		case `isogate_run_duration_seconds_count{tier="v8"}`:
			m.RunCount = v
		}
	}
	return m
}

// redisUsedMemory asks the redis-server at addr for INFO memory and
// returns its used_memory in bytes.
func redisUsedMemory(addr string) (int64, error) {
	conn, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		return 0, fmt.Errorf("redis INFO: %w", err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := conn.Write([]byte("INFO memory\r\n")); err != nil {
		return 0, fmt.Errorf("redis INFO: %w", err)
	}
	r := bufio.NewReader(conn)
	head, err := r.ReadString('\n')
	if err != nil || !strings.HasPrefix(head, "$") {
		return 0, fmt.Errorf("redis INFO: unexpected answer %q: %v", head, err)
	}
	size, err := strconv.Atoi(strings.TrimSpace(head[1:]))
	if err != nil {
		return 0, fmt.Errorf("redis INFO: %w", err)
	}
	body := make([]byte, size)
	if _, err := io.ReadFull(r, body); err != nil {
		return 0, fmt.Errorf("redis INFO: %w", err)
	}
	return parseUsedMemory(string(body))
}

// parseUsedMemory reads used_memory from an INFO memory answer.
func parseUsedMemory(info string) (int64, error) {
	for line := range strings.SplitSeq(info, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "used_memory:"); ok {
			return strconv.ParseInt(v, 10, 64)
		}
	}
	return 0, errors.New("redis INFO: no used_memory")
}
