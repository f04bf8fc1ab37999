// Command benchreport measures isogate's V8 code mode against goja-based
// designs and writes the results as Markdown.
//
//	cd bench && go run ./cmd/benchreport -out RESULTS.md                # ~5 minutes on 2 cores
//	cd bench && go run ./cmd/benchreport -quick -out /tmp/RESULTS.md    # ~2 minutes
//
// The process-isolated variant runs this very binary as its sandbox worker
// processes ("benchreport sandbox-worker"), unless -worker-cmd names
// another worker command (for example "../bin/isogate sandbox-worker" from bench/).
package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/isogate/isogate/bench"
)

func main() {
	bench.ServeWorkerIfRequested() // the v8-proc variant's worker processes
	// The report runs on a goroutine of its own, as a gateway's requests
	// do: v8sandbox keeps the main goroutine on the main thread (where V8
	// calls are slow), so a run started there hops to another goroutine
	// and back, a cost the gateway never pays and the goja variants never
	// see.
	code := make(chan int)
	go func() { code <- run() }()
	os.Exit(<-code)
}

func run() int {
	var (
		out           = flag.String("out", "", "write the Markdown report to this file (default: stdout)")
		quick         = flag.Bool("quick", false, "short budgets: less precise, about two minutes")
		workers       = flag.Int("workers", 0, "pool size of pooled variants (default: the highest concurrency, 8)")
		memoryN       = flag.Int("memory-n", 0, "sandboxes held at once to measure memory (default 16)")
		variants      = flag.String("variants", "", "comma-separated variants to measure (default: all)")
		workloads     = flag.String("workloads", "", "comma-separated workloads to measure (default: all)")
		sections      = flag.String("sections", "", "comma-separated extra sections to run alone, by name or part of the title (default: the whole report); -list names them")
		with          = flag.String("with", "", "comma-separated opt-in sections to add to the whole report (make bench: soak)")
		concurrency   = flag.String("concurrency", "", "comma-separated throughput concurrency levels (default 1,2,8)")
		latency       = flag.Duration("latency", 0, "latency sampling budget per workload and variant")
		throughput    = flag.Duration("throughput", 0, "throughput budget per concurrency level")
		noConformance = flag.Bool("no-conformance", false, "skip the ECMAScript conformance set")
		workerCmd     = flag.String("worker-cmd", "", "sandbox worker command of the process-isolated variant, space-separated (default: this binary with sandbox-worker)")
		timeout       = flag.Duration("timeout", 20*time.Minute, "give up after this long")
		list          = flag.Bool("list", false, "list variants and workloads, then exit")
	)
	flag.Parse()

	if *list {
		for _, s := range bench.Variants() {
			fmt.Printf("variant  %-12s %s\n", s.Name, s.Label)
		}
		for _, w := range bench.Workloads() {
			fmt.Printf("workload %-18s %s\n", w.Name, w.Description)
		}
		for _, s := range bench.Sections() {
			optIn := ""
			if s.OptIn {
				optIn = " (opt-in: only with -sections or -with)"
			}
			fmt.Printf("section  %-18s %s%s\n", s.Name, s.Title, optIn)
		}
		return 0
	}

	cfg := bench.DefaultReportConfig(*quick)
	cfg.Progress = os.Stderr
	cfg.NoConformance = *noConformance
	if *variants != "" {
		cfg.Variants = splitList(*variants)
	}
	if *workloads != "" {
		cfg.Workloads = splitList(*workloads)
	}
	if *sections != "" {
		cfg.Sections = splitList(*sections)
	}
	if *with != "" {
		cfg.With = splitList(*with)
	}
	if *concurrency != "" {
		cfg.Measure.Concurrency = nil
		for _, s := range splitList(*concurrency) {
			var c int
			if _, err := fmt.Sscan(s, &c); err != nil || c < 1 {
				fmt.Fprintf(os.Stderr, "benchreport: bad concurrency %q\n", s)
				return 2
			}
			cfg.Measure.Concurrency = append(cfg.Measure.Concurrency, c)
		}
		cfg.Workers = cfg.Measure.Concurrency[len(cfg.Measure.Concurrency)-1]
	}
	if *workers > 0 {
		cfg.Workers = *workers
	}
	if *memoryN > 0 {
		cfg.MemoryN = *memoryN
	}
	if *latency > 0 {
		cfg.Measure.LatencyBudget = *latency
	}
	if *throughput > 0 {
		cfg.Measure.ThroughputBudget = *throughput
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()

	if *workerCmd != "" {
		cfg.WorkerCommand = strings.Fields(*workerCmd)
	}

	var buf bytes.Buffer
	defer bench.RemoveBuilds()
	if err := bench.WriteReport(ctx, cfg, &buf); err != nil {
		fmt.Fprintf(os.Stderr, "benchreport: %v\n", err)
		return 1
	}
	if *out == "" {
		os.Stdout.Write(buf.Bytes())
		return 0
	}
	if err := os.WriteFile(*out, buf.Bytes(), 0o644); err != nil {
		fmt.Fprintf(os.Stderr, "benchreport: %v\n", err)
		return 1
	}
	fmt.Fprintf(os.Stderr, "benchreport: wrote %s\n", *out)
	return 0
}

func splitList(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}
