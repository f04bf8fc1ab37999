package bench

import (
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/isogate/isogate/internal/resultstore/redistest"
)

// The thousand-sessions ramp is opt-in: a report selecting no section
// leaves it out, one naming it runs it.
func TestSessionsSectionIsOptIn(t *testing.T) {
	var sec Section
	for _, s := range Sections() {
		if s.Name == "sessions" {
			sec = s
		}
	}
	if !sec.OptIn {
		t.Fatal("the sessions section is not registered as opt-in")
	}
	if sectionSelected(nil, nil, sec) {
		t.Fatal("a report without -sections runs the sessions ramp")
	}
	if sectionSelected(nil, []string{"soak"}, sec) {
		t.Fatal("make bench (-with soak) runs the sessions ramp")
	}
	if !sectionSelected([]string{"sessions"}, nil, sec) {
		t.Fatal("-sections sessions does not run it")
	}
}

// The ramp stops on errors or on a p99 over ten times the first step's
// and over a second, and the report says which.
func TestSessionsReportVerdict(t *testing.T) {
	first := sessionsStep{Sessions: 100, Runs: 600, P50: 8 * time.Millisecond, P99: 40 * time.Millisecond}
	slow := sessionsStep{Sessions: 500, Runs: 3000, P99: 1500 * time.Millisecond}
	if !sessionsExplodes(first, slow) {
		t.Error("p99 1.5 s against 40 ms is not an explosion")
	}
	if sessionsExplodes(first, sessionsStep{P99: 390 * time.Millisecond}) || sessionsExplodes(sessionsStep{P99: 200 * time.Millisecond}, slow) {
		t.Error("a p99 under ten times the first's, or under a second, counted as an explosion")
	}
	sc := sessionsConfig{Steps: []int{100, 250, 500, 1000}, Hold: 30 * time.Second, Every: 5 * time.Second}
	for _, c := range []struct {
		steps []sessionsStep
		want  string
	}{
		{[]sessionsStep{first, {Sessions: 250, Errors: 3, FirstErrors: []string{"PRINCIPAL_BUSY: `x`"}}},
			"The ramp stopped at 250 sessions: 3 errors (the first below).\n\n- at 250 sessions: `PRINCIPAL_BUSY: 'x'`\n"},
		{[]sessionsStep{first, slow}, "The ramp stopped at 500 sessions: p99 1500.00 ms against 40.00 ms at 100 sessions."},
		{[]sessionsStep{first, {Sessions: 250}, {Sessions: 500}, {Sessions: 1000}}, "Every step held without errors, up to 1000 sessions."},
		{nil, "No step was measured."},
	} {
		if out := sessionsReport(sc, c.steps); !strings.Contains(out, c.want) {
			t.Errorf("report lacks %q:\n%s", c.want, out)
		}
	}
	if out := sessionsReport(sc, []sessionsStep{first}); !strings.Contains(out, "| 100 | 600 | 0.0 | 0 | 8.00 ms | 40.00 ms |") {
		t.Errorf("report lacks the step's row:\n%s", out)
	}
}

func TestParseSessionsSteps(t *testing.T) {
	if s, err := parseSteps("100, 250,1000"); err != nil || len(s) != 3 || s[2] != 1000 {
		t.Fatalf("parseSteps = %v, %v", s, err)
	}
	if s, err := parseSteps(""); err != nil || s != nil {
		t.Fatalf("parseSteps(\"\") = %v, %v", s, err)
	}
	for _, bad := range []string{"100,x", "0", "-5"} {
		if _, err := parseSteps(bad); err == nil {
			t.Errorf("parseSteps(%q) accepted", bad)
		}
	}
}

// The probes read a real redis-server's used_memory and this process's
// file descriptors and CPU time.
func TestSessionsProbes(t *testing.T) {
	srv, err := redistest.Start()
	if errors.Is(err, redistest.ErrNoRedis) {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Stop()
	if n, err := redisUsedMemory(srv.Addr); err != nil || n <= 0 {
		t.Fatalf("redis used_memory = %d, %v", n, err)
	}
	if _, err := parseUsedMemory("# Memory\r\nused_memory_human:1M\r\n"); err == nil {
		t.Fatal("an INFO answer without used_memory was read")
	}
	f, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	// stdin, stdout, stderr and f at least; none for a process that is not.
	if n := countFDs(os.Getpid()); n < 4 {
		t.Fatalf("%d fds with /dev/null open", n)
	}
	if n := countFDs(-1); n != 0 {
		t.Fatalf("%d fds of no process", n)
	}
	if c := procCPU(os.Getpid()); c < 0 {
		t.Fatalf("CPU time %f", c)
	}
}

// The replicas' tier-3 run histogram is read from their Prometheus text,
// and the machine's CPU counters from /proc/stat.
func TestSessionsMetricsParse(t *testing.T) {
	m := parseGatewayMetrics("# TYPE isogate_run_duration_seconds histogram\n" +
		"isogate_run_duration_seconds_sum{tier=\"simple\"} 9\n" +
		"isogate_run_duration_seconds_sum{tier=\"v8\"} 1.5\n" +
		"isogate_run_duration_seconds_count{tier=\"v8\"} 100\n")
	if m.RunSum != 1.5 || m.RunCount != 100 {
		t.Fatalf("parsed %+v, want the v8 tier's sum 1.5 and count 100", m)
	}
	if busy, total := machineCPU(); total <= 0 || busy < 0 || busy > total {
		t.Fatalf("machine CPU busy %f of %f", busy, total)
	}
}
