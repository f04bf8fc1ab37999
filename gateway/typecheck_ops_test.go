package gateway

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/isogate/isogate/config"
	"github.com/isogate/isogate/internal/app"
	"github.com/isogate/isogate/internal/backend"
	"github.com/isogate/isogate/internal/surface"
	"github.com/isogate/isogate/internal/testutil"
	"github.com/isogate/isogate/internal/typecheck"
	"github.com/isogate/isogate/internal/typecheck/checkworker"
	"github.com/isogate/isogate/v8sandbox"
)

// opsGateway serves a gateway with sandbox.typecheck on and the recording
// counter backend over real HTTP, its checker loaded; base is its
// http://host:port.
func opsGateway(t *testing.T, isolation config.Isolation, mode string, timeout time.Duration) (g *Gateway, base string, cs *mcp.ClientSession, rec *recorder) {
	t.Helper()
	cfg := config.Default()
	cfg.Server.CacheDir = t.TempDir()
	cfg.Sandbox.Isolation = isolation
	cfg.Sandbox.Typecheck = mode
	cfg.Sandbox.TypecheckTimeout = timeout
	var runner v8sandbox.Runner
	if isolation == config.IsolationThread {
		cfg.Sandbox.TrustedCode = true
		runner = testPool()
	} else {
		cfg.Sandbox.MaxConcurrent = 1 // one sandbox worker
	}
	rec = &recorder{}
	g, base = serveHealthy(t, cfg, app.Options{Runner: runner, ExtraSpecs: []backend.Spec{rec.spec()}})
	if err := g.app.Typecheck.Warm(t.Context()); err != nil {
		t.Fatal(err)
	}
	return g, base, connect(t, g, nil), rec
}

// readyzTypecheck reads /readyz over HTTP: its status and the checker's
// report.
func readyzTypecheck(t *testing.T, base string) (int, *surface.TypecheckReport) {
	t.Helper()
	resp, err := http.Get(base + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body struct {
		Sandbox struct {
			Typecheck *surface.TypecheckReport `json:"typecheck"`
		} `json:"sandbox"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		t.Fatal(err)
	}
	if body.Sandbox.Typecheck == nil {
		t.Fatal("/readyz has no sandbox.typecheck")
	}
	return resp.StatusCode, body.Sandbox.Typecheck
}

// scrape reads /metrics over HTTP: each sample's value by its series as
// written (`name{labels}`).
func scrape(t *testing.T, base string) map[string]float64 {
	t.Helper()
	resp, err := http.Get(base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out := map[string]float64{}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || line[0] == '#' {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if err != nil {
			t.Fatalf("metrics line %q: %v", line, err)
		}
		out[line[:i]] = v
	}
	if err := sc.Err(); err != nil && err != io.EOF {
		t.Fatal(err)
	}
	return out
}

// wantSamples checks samples against want, series by series.
func wantSamples(t *testing.T, got map[string]float64, want map[string]float64) {
	t.Helper()
	for series, v := range want {
		g, ok := got[series]
		if !ok {
			t.Errorf("/metrics lacks %s", series)
		} else if g != v {
			t.Errorf("/metrics %s = %v, want %v", series, g, v)
		}
	}
}

// TestTypecheckReportedOverHTTP: with sandbox.typecheck on, /readyz says
// where the checker runs, that it is ready, its worker (process isolation:
// PID, RSS, uptime), its heap, its code cache file and code mode's checks
// by outcome; /metrics has the same as isogate_typecheck_* series. In both
// isolation modes.
func TestTypecheckReportedOverHTTP(t *testing.T) {
	for _, isolation := range []config.Isolation{config.IsolationThread, config.IsolationProcess} {
		t.Run(string(isolation), func(t *testing.T) {
			_, base, cs, rec := opsGateway(t, isolation, "strict", time.Minute)
			chainOK(t, cs, "const out = []; for (const id of ['v1']) out.push(await counter.bump({id})); return out")
			text, isErr, _ := callText(t, cs, "call_tool_chain", map[string]any{"code": wrongPrograms[0].code})
			if !isErr || !strings.HasPrefix(text, "TYPECHECK_FAILED") {
				t.Fatalf("wrong program: %s", text)
			}
			if calls := strings.Join(rec.got(), ","); calls != "v1" {
				t.Fatalf("backend calls %q, want v1", calls)
			}

			code, tc := readyzTypecheck(t, base)
			if code != http.StatusOK || tc.Mode != "strict" || tc.State != "ready" || tc.Error != "" {
				t.Errorf("/readyz %d, typecheck %+v; want 200, strict, ready", code, tc)
			}
			if tc.Checks.OK != 1 || tc.Checks.Refused != 1 || tc.Checks.Failed+tc.Checks.Timeout+tc.Checks.Skipped+tc.Checks.Cancelled != 0 || tc.Checks.MeanMS <= 0 {
				t.Errorf("checks %+v; want ok 1, refused 1, a mean duration", tc.Checks)
			}
			if tc.HeapUsedBytes <= 0 || tc.CodeCache.Path == "" {
				t.Errorf("heap %d, code cache %+v; want both", tc.HeapUsedBytes, tc.CodeCache)
			}
			m := scrape(t, base)
			wantSamples(t, m, map[string]float64{
				"isogate_typecheck_up":                                       1,
				`isogate_typecheck_state{state="ready"}`:                     1,
				`isogate_typecheck_state{state="restarting"}`:                0,
				`isogate_typecheck_checks_total{outcome="ok"}`:               1,
				`isogate_typecheck_checks_total{outcome="refused"}`:          1,
				`isogate_typecheck_checks_total{outcome="failed"}`:           0,
				`isogate_typecheck_checks_total{outcome="timeout"}`:          0,
				`isogate_typecheck_checks_total{outcome="skipped"}`:          0,
				`isogate_typecheck_checks_total{outcome="cancelled"}`:        0,
				"isogate_typecheck_check_duration_seconds_count":             2,
				`isogate_typecheck_code_cache_total{event="rejected"}`:       0,
				`isogate_typecheck_code_cache_total{event="invalid"}`:        0,
				`isogate_typecheck_check_duration_seconds_bucket{le="+Inf"}`: 2,
			})
			if m["isogate_typecheck_heap_used_bytes"] <= 0 {
				t.Errorf("isogate_typecheck_heap_used_bytes = %v", m["isogate_typecheck_heap_used_bytes"])
			}

			// isogate://stats gives a client that is not an admin the state,
			// not the process's details.
			res, err := cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: "isogate://stats"})
			if err != nil {
				t.Fatal(err)
			}
			if st := res.Contents[0].Text; !strings.Contains(st, `"mode": "strict"`) || !strings.Contains(st, `"state": "ready"`) ||
				strings.Contains(st, `"pid"`) || strings.Contains(st, ".v8cache") {
				t.Errorf("isogate://stats: %s\nwant the checker's mode and state, no PID or path", st)
			}

			if isolation == config.IsolationThread {
				if tc.Where != "in_process" || tc.Worker != nil {
					t.Errorf("thread isolation: where %q, worker %+v; want in_process, none", tc.Where, tc.Worker)
				}
				if _, ok := m["isogate_typecheck_worker_rss_bytes"]; ok {
					t.Error("thread isolation reports a checker worker's RSS")
				}
				return
			}
			if tc.Where != "worker" || tc.Worker == nil || tc.Worker.PID <= 0 || tc.Worker.RSSBytes <= 0 || tc.Worker.UptimeSeconds <= 0 || tc.Restarts != 0 {
				t.Errorf("process isolation: %+v, worker %+v; want a worker with its PID, RSS and uptime, no restart", tc, tc.Worker)
			}
			// The first start made the code cache file.
			if cc := tc.CodeCache; cc.Misses != 1 || cc.Written != 1 || cc.SizeBytes <= 0 || !strings.HasSuffix(cc.Path, ".v8cache") {
				t.Errorf("code cache %+v; want missed once, written once, its size", cc)
			}
			wantSamples(t, m, map[string]float64{
				"isogate_typecheck_restarts_total":                    0,
				`isogate_typecheck_code_cache_total{event="miss"}`:    1,
				`isogate_typecheck_code_cache_total{event="written"}`: 1,
				`isogate_typecheck_code_cache_total{event="hit"}`:     0,
				"isogate_typecheck_code_cache_bytes":                  float64(tc.CodeCache.SizeBytes),
			})
			if m["isogate_typecheck_worker_rss_bytes"] <= 0 || m["isogate_typecheck_worker_uptime_seconds"] <= 0 {
				t.Errorf("worker RSS %v, uptime %v", m["isogate_typecheck_worker_rss_bytes"], m["isogate_typecheck_worker_uptime_seconds"])
			}
		})
	}
}

// A check past sandbox.typecheck_timeout counts as timed out: strict
// refuses the program (TYPECHECK_TIMEOUT, no call), warn runs it with a
// notice.
func TestTypecheckTimeoutCounted(t *testing.T) {
	for _, mode := range []string{"strict", "warn"} {
		t.Run(mode, func(t *testing.T) {
			_, base, cs, rec := opsGateway(t, config.IsolationThread, mode, time.Nanosecond)
			text, isErr, res := callText(t, cs, "call_tool_chain", map[string]any{"code": "const out = []; for (const id of ['t1']) out.push(await counter.bump({id})); return out"})
			switch mode {
			case "strict":
				if !isErr || !strings.HasPrefix(text, "TYPECHECK_TIMEOUT: the program was not run") || res.Meta["isogate/code"] != "TYPECHECK_TIMEOUT" {
					t.Errorf("a check past its deadline: %s (_meta %v); want TYPECHECK_TIMEOUT", text, res.Meta)
				}
				if calls := rec.got(); len(calls) != 0 {
					t.Fatalf("backend calls %v, want none", calls)
				}
			case "warn":
				if isErr || !strings.Contains(text, "[notice] typecheck: the program ran unchecked") {
					t.Errorf("a check past its deadline: %s; want the run, with the notice", text)
				}
				if calls := strings.Join(rec.got(), ","); calls != "t1" {
					t.Fatalf("backend calls %q, want t1", calls)
				}
			}
			_, tc := readyzTypecheck(t, base)
			if tc.Checks.Timeout != 1 || tc.Checks.OK != 0 || tc.Checks.LastError == "" {
				t.Errorf("checks %+v; want one timeout, its error", tc.Checks)
			}
			wantSamples(t, scrape(t, base), map[string]float64{
				`isogate_typecheck_checks_total{outcome="timeout"}`: 1,
				`isogate_typecheck_checks_total{outcome="ok"}`:      0,
			})
		})
	}
}

// TestTypecheckWorkerKilledIsReported: the checker worker SIGKILLed, and
// its replacement held stopped before it serves, /readyz and /metrics
// report the checker restarting (isogate_typecheck_up 0), while /readyz
// stays 200. A program waits for the checker within its run's deadline
// (2 s here): past it, strict refuses it (TYPECHECK_UNAVAILABLE, no call)
// and warn runs it with a notice naming why. Once the replacement serves,
// both report it ready again, the restart counted, and checks work again.
func TestTypecheckWorkerKilledIsReported(t *testing.T) {
	for _, mode := range []string{"warn", "strict"} {
		t.Run(mode, func(t *testing.T) {
			g, base, cs, rec := opsGateway(t, config.IsolationProcess, mode, time.Minute)
			checker := g.app.Typecheck.(*checkworker.Checker)
			stopped, kills := holdReplacement(t, checker)
			t.Logf("replacement %d held after %d kill(s)", stopped, kills)

			code, tc := readyzTypecheck(t, base)
			if code != http.StatusOK || tc.State != "restarting" || tc.Restarts != uint64(kills) ||
				tc.Worker == nil || tc.Worker.PID != stopped {
				t.Errorf("/readyz %d, typecheck %+v (worker %+v); want 200, restarting, %d restarts, worker %d", code, tc, tc.Worker, kills, stopped)
			}
			wantSamples(t, scrape(t, base), map[string]float64{
				"isogate_typecheck_up":                        0,
				`isogate_typecheck_state{state="restarting"}`: 1,
				`isogate_typecheck_state{state="ready"}`:      0,
				"isogate_typecheck_restarts_total":            float64(kills),
			})

			// A program waits for the checker until its run's deadline (the
			// replacement stays stopped until then).
			ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
			defer cancel()
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "call_tool_chain",
				Arguments: map[string]any{"code": wrongPrograms[1].code, "timeout": 2000}})
			if err != nil {
				t.Fatal(err)
			}
			text := res.Content[0].(*mcp.TextContent).Text
			switch mode {
			case "strict":
				if !res.IsError || !strings.HasPrefix(text, "TYPECHECK_UNAVAILABLE: the program was not run") || res.Meta["isogate/code"] != "TYPECHECK_UNAVAILABLE" {
					t.Errorf("strict, checker restarting: %s (_meta %v); want TYPECHECK_UNAVAILABLE", text, res.Meta)
				}
				if calls := rec.got(); len(calls) != 0 {
					t.Fatalf("backend calls %v; want none", calls)
				}
			case "warn":
				if !strings.Contains(text, "[notice] typecheck: the program ran unchecked: ") {
					t.Errorf("warn, checker restarting: %s; want the run with the notice", text)
				}
				if calls := strings.Join(rec.got(), ","); calls != "r1" {
					t.Fatalf("backend calls %q; want r1 (the program ran unchecked until its mistake)", calls)
				}
			}
			_, tc = readyzTypecheck(t, base)
			if tc.Checks.Failed != 1 || tc.Checks.Skipped != 0 {
				t.Errorf("checks %+v; want one failed", tc.Checks)
			}

			if err := syscall.Kill(stopped, syscall.SIGCONT); err != nil {
				t.Fatal(err)
			}
			if err := checker.Warm(t.Context()); err != nil {
				t.Fatal(err)
			}
			code, tc = readyzTypecheck(t, base)
			if code != http.StatusOK || tc.State != "ready" || tc.Restarts != uint64(kills) || tc.Worker == nil || tc.Worker.PID != stopped {
				t.Errorf("after the restart: /readyz %d, typecheck %+v; want ready, %d restarts, worker %d", code, tc, kills, stopped)
			}
			wantSamples(t, scrape(t, base), map[string]float64{
				"isogate_typecheck_up":                             1,
				"isogate_typecheck_restarts_total":                 float64(kills),
				`isogate_typecheck_checks_total{outcome="failed"}`: 1,
			})
			text, isErr, _ := callText(t, cs, "call_tool_chain", map[string]any{"code": wrongPrograms[1].code})
			switch {
			case mode == "strict" && (!isErr || !strings.HasPrefix(text, "TYPECHECK_FAILED")):
				t.Errorf("strict, checker back: %s; want TYPECHECK_FAILED", text)
			case mode == "warn" && !strings.Contains(text, "[notice] typecheck: "+wrongPrograms[1].hint):
				t.Errorf("warn, checker back: %s; want the diagnostic", text)
			}
		})
	}
}

// holdReplacement SIGKILLs the checker's worker and SIGSTOPs its
// replacement before it serves (a replacement caught too late is killed in
// turn); it returns the stopped process, continued when the test ends, and
// how many workers it killed.
func holdReplacement(t *testing.T, checker *checkworker.Checker) (stopped, kills int) {
	t.Helper()
	pid := checker.Stats().Workers[0].PID
	for {
		if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		kills++
		old := pid
		testutil.Eventually(t, time.Minute, func() bool {
			st := checker.Stats()
			return len(st.Workers) == 1 && st.Workers[0].PID != old
		}, "the replacement worker")
		pid = checker.Stats().Workers[0].PID
		if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
			t.Fatal(err)
		}
		if !checker.Ready() {
			t.Cleanup(func() { _ = syscall.Kill(pid, syscall.SIGCONT) })
			return pid, kills
		}
		// It served already: stopped, it would only time checks out.
		if kills == 20 {
			t.Fatalf("%d replacements served before they could be stopped", kills)
		}
	}
}

// A check whose run's client goes away counts as cancelled, not as a
// failure of the checker (whose alerts it would set off).
func TestTypecheckCancelledCounted(t *testing.T) {
	g, base, cs, rec := opsGateway(t, config.IsolationProcess, "strict", time.Minute)
	checker := g.app.Typecheck.(*checkworker.Checker)
	pid := checker.Stats().Workers[0].PID
	// Stopped, the worker cannot answer: the check is surely in progress
	// once it is on the worker.
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = syscall.Kill(pid, syscall.SIGCONT) })
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, _ = cs.CallTool(ctx, &mcp.CallToolParams{Name: "call_tool_chain",
			Arguments: map[string]any{"code": wrongPrograms[0].code}})
	}()
	testutil.Eventually(t, time.Minute, func() bool {
		st := checker.Stats()
		return len(st.Workers) == 1 && st.Workers[0].Runs == 1
	}, "the check on the worker")
	cancel()
	<-done
	testutil.Eventually(t, time.Minute, func() bool {
		_, tc := readyzTypecheck(t, base)
		return tc.Checks != (typecheck.Checks{})
	}, "the check's end")
	if _, tc := readyzTypecheck(t, base); tc.Checks.Cancelled != 1 || tc.Checks.Failed != 0 || tc.Checks.LastError != "" {
		t.Errorf("checks %+v; want one cancelled, no failure", tc.Checks)
	}
	if calls := rec.got(); len(calls) != 0 {
		t.Errorf("backend calls %v; want none", calls)
	}
	wantSamples(t, scrape(t, base), map[string]float64{
		`isogate_typecheck_checks_total{outcome="cancelled"}`: 1,
		`isogate_typecheck_checks_total{outcome="failed"}`:    0,
	})
}
