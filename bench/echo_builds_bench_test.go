package bench

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// BenchmarkEchoStdioBuilds compares isogate builds over stdio, side by
// side: ISOGATE_BENCH_BINS names them ("name=/path/to/isogate" separated by
// ";"; a build may add environment variables for its process after commas,
// "new=/tmp/isogate,GOMAXPROCS=1"). Every round samples, in turn, a direct
// `echo` of server-everything and, through each build, its passthrough
// echo, tier 2 and tier 3 (ISOGATE_BENCH_PATHS: a comma list of pt, t2,
// t3; pt alone by default), SampleGap apart. Each path logs its p50 and
// p25, p50 minus and over direct, and the CPU time and context switches of
// the process it went through (summed over its threads, from
// /proc/PID/task/*/schedstat and status), per call.
//
//	ISOGATE_BENCH_BINS="old=/tmp/isogate-old;new=/tmp/isogate-new" ISOGATE_BENCH_PATHS=pt,t3 \
//	  go test -run '^$' -bench EchoStdioBuilds -benchtime 500x -v ./
func BenchmarkEchoStdioBuilds(b *testing.B) {
	spec := os.Getenv("ISOGATE_BENCH_BINS")
	if spec == "" {
		b.Skip("ISOGATE_BENCH_BINS names the builds to compare")
	}
	root, err := moduleRoot()
	if err != nil {
		b.Fatal(err)
	}
	everything, err := serverEverything(root)
	if err != nil {
		b.Skip(err)
	}
	ctx := context.Background()
	dir := b.TempDir()
	mode := cmp.Or(os.Getenv("ISOGATE_BENCH_ISOLATION"), "thread")
	want := strings.Split(cmp.Or(os.Getenv("ISOGATE_BENCH_PATHS"), "pt"), ",")
	type path struct {
		name string
		pid  int
		f    func() error
	}
	directCmd := exec.Command("node", everything, "stdio")
	direct, err := connectStdio(ctx, directCmd)
	if err != nil {
		b.Fatal(err)
	}
	defer direct.Close()
	paths := []path{{"direct", directCmd.Process.Pid, toolCall(ctx, direct, "echo", map[string]any{"message": "x"})}}
	for i, build := range strings.Split(spec, ";") {
		name, rest, _ := strings.Cut(build, "=")
		parts := strings.Split(rest, ",")
		bdir := filepath.Join(dir, strconv.Itoa(i))
		if err := os.MkdirAll(bdir, 0o700); err != nil {
			b.Fatal(err)
		}
		cs, pid, err := startIsogateEnv(ctx, parts[0], bdir, everything, mode, parts[1:])
		if err != nil {
			b.Fatalf("%s: %v", name, err)
		}
		defer cs.Close()
		echo, err := passthroughEcho(ctx, cs)
		if err != nil {
			b.Fatalf("%s: %v", name, err)
		}
		for _, w := range want {
			switch w {
			case "pt":
				paths = append(paths, path{name + "/passthrough", pid, toolCall(ctx, cs, echo, map[string]any{"message": "x"})})
			case "t2":
				paths = append(paths, path{name + "/tier2", pid, toolCall(ctx, cs, "call_tool_chain", map[string]any{"code": `return await everything.echo({message: "x"})`})})
			case "t3":
				paths = append(paths, path{name + "/tier3", pid, toolCall(ctx, cs, "call_tool_chain", map[string]any{"code": `const r = await everything.echo({message: "x"}); return r.length`})})
			default:
				b.Fatalf("ISOGATE_BENCH_PATHS: unknown path %q (pt, t2, t3)", w)
			}
		}
	}
	for range 20 { // warm: backend start, transform cache, worker contexts
		for _, p := range paths {
			if err := p.f(); err != nil {
				b.Fatalf("%s: %v", p.name, err)
			}
		}
	}
	samples := make([][]time.Duration, len(paths))
	cpu := make([]time.Duration, len(paths))
	switches := make([]int64, len(paths))
	rounds := 0
	for b.Loop() {
		rounds++
		for i, p := range paths {
			b.StopTimer()
			time.Sleep(SampleGap)
			c0, s0 := threadsCost(p.pid)
			b.StartTimer()
			start := time.Now()
			if err := p.f(); err != nil {
				b.Fatalf("%s: %v", p.name, err)
			}
			samples[i] = append(samples[i], time.Since(start))
			b.StopTimer()
			c1, s1 := threadsCost(p.pid)
			cpu[i] += c1 - c0
			switches[i] += s1 - s0
			b.StartTimer()
		}
	}
	var d50 time.Duration
	for i, p := range paths {
		s := samples[i]
		slices.Sort(s)
		p50 := s[len(s)/2]
		if i == 0 {
			d50 = p50
		}
		b.Logf("%-22s p50 %6dµs  p25 %6dµs  −direct %6dµs  ÷direct ×%.2f  cpu/call %5dµs  switches/call %.1f",
			p.name, p50.Microseconds(), s[len(s)/4].Microseconds(), (p50 - d50).Microseconds(), float64(p50)/float64(d50),
			(cpu[i] / time.Duration(rounds)).Microseconds(), float64(switches[i])/float64(rounds))
		b.ReportMetric(float64(p50.Microseconds()), p.name+"-p50-µs")
	}
}

// threadsCost is the CPU time and the context switches (voluntary and not)
// of process pid so far, summed over its threads (Linux /proc; zero
// elsewhere).
func threadsCost(pid int) (cpu time.Duration, switches int64) {
	stats, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/schedstat", pid))
	for _, f := range stats {
		data, _ := os.ReadFile(f)
		if fields := strings.Fields(string(data)); len(fields) > 0 {
			ns, _ := strconv.ParseInt(fields[0], 10, 64)
			cpu += time.Duration(ns)
		}
	}
	status, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/status", pid))
	for _, f := range status {
		data, _ := os.ReadFile(f)
		for line := range strings.Lines(string(data)) {
			for _, key := range []string{"voluntary_ctxt_switches:", "nonvoluntary_ctxt_switches:"} {
				if v, ok := strings.CutPrefix(line, key); ok {
					n, _ := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
					switches += n
				}
			}
		}
	}
	return cpu, switches
}
