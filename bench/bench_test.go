package bench

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/isogate/isogate/internal/testutil"
)

// TestMain makes a plain `go test ./...` in bench/ run every benchmark once
// (as -bench . -benchtime 1x would), so the benchmark code stays green. An
// explicit -bench or -run keeps its usual meaning.
func TestMain(m *testing.M) {
	ServeWorkerIfRequested() // the v8-proc variant's worker processes
	flag.Parse()
	set := map[string]bool{}
	flag.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if !set["test.bench"] && !set["test.run"] {
		flag.Set("test.bench", ".")
		if !set["test.benchtime"] {
			flag.Set("test.benchtime", "1x")
		}
	}
	dataHome, err := testutil.DataHome() // the gateways the benchmarks start
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	shared.close()
	RemoveBuilds()
	os.RemoveAll(dataHome)
	os.Exit(code)
}

// shared holds the variants built once for every test and benchmark.
var shared sharedVariants

type sharedVariants struct {
	once     sync.Once
	variants []Variant
	skipped  map[string]string
}

// testWorkers is the pool size of pooled variants in tests.
const testWorkers = 2

func (s *sharedVariants) get(tb testing.TB) []Variant {
	s.once.Do(func() {
		s.skipped = map[string]string{}
		cfg := VariantConfig{Workers: testWorkers}
		for _, spec := range Variants() {
			v, err := spec.New(cfg)
			if err != nil {
				s.skipped[spec.Name] = err.Error()
				continue
			}
			s.variants = append(s.variants, v)
		}
	})
	for name, why := range s.skipped {
		tb.Logf("variant %s not available: %s", name, why)
	}
	return s.variants
}

func (s *sharedVariants) close() {
	for _, v := range s.variants {
		v.Close()
	}
}

func (s *sharedVariants) byName(tb testing.TB, name string) Variant {
	for _, v := range s.get(tb) {
		if v.Name() == name {
			return v
		}
	}
	tb.Skipf("variant %s not available", name)
	return nil
}

// skipHeavy skips workloads too slow for goja under -race or -short.
func skipHeavy(tb testing.TB, w *Workload) {
	if w.Heavy && (raceEnabled || testing.Short()) {
		tb.Skipf("%s is heavy: skipped under -race or -short", w.Name)
	}
}

func TestWorkloadsOnEveryVariant(t *testing.T) {
	for _, v := range shared.get(t) {
		for _, w := range Workloads() {
			t.Run(v.Name()+"/"+w.Name, func(t *testing.T) {
				skipHeavy(t, w)
				ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
				defer cancel()
				got, err := v.Run(ctx, w)
				if err != nil {
					t.Fatal(err)
				}
				if err := w.Check(got); err != nil {
					t.Fatal(err)
				}
			})
		}
	}
}

func TestWorkloadsConcurrently(t *testing.T) {
	w := WorkloadByName(WorkloadAgentChain)
	for _, v := range shared.get(t) {
		t.Run(v.Name(), func(t *testing.T) {
			var wg sync.WaitGroup
			errs := make(chan error, 6)
			for range 6 {
				wg.Go(func() {
					got, err := v.Run(context.Background(), w)
					if err == nil {
						err = w.Check(got)
					}
					errs <- err
				})
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				if err != nil {
					t.Error(err)
				}
			}
		})
	}
}

// TestFailures checks that every variant reports script errors, ends runs
// at their deadline and detects a main promise that can never settle.
func TestFailures(t *testing.T) {
	cases := []struct {
		name, source string
		timeout      time.Duration
		want         string
	}{
		{"throw", `throw new RangeError("nope");`, 10 * time.Second, "nope"},
		{"syntax", `return 1 +;`, 10 * time.Second, ""},
		{"tool-error", `return await fetch_item("not an object");`, 10 * time.Second, "fetch_item expects"},
		{"spin", `while (true) {}`, 300 * time.Millisecond, ""},
		{"spin-after-await", `await fetch_item({ id: 1 }); for (;;) {}`, 300 * time.Millisecond, ""},
		{"never-settles", `await new Promise(() => {}); return 1;`, 10 * time.Second, ""},
	}
	tools := WorkloadByName(WorkloadParallel10).Tools
	for _, v := range shared.get(t) {
		for _, c := range cases {
			t.Run(v.Name()+"/"+c.name, func(t *testing.T) {
				w := &Workload{Name: c.name, Source: c.source, Tools: tools}
				ctx, cancel := context.WithTimeout(context.Background(), c.timeout)
				defer cancel()
				got, err := v.Run(ctx, w)
				if err == nil {
					t.Fatalf("got %s, want an error", got)
				}
				if c.want != "" && !strings.Contains(err.Error(), c.want) {
					t.Fatalf("error %q does not mention %q", err, c.want)
				}
				t.Logf("%v", err)
			})
		}
	}
	// Every variant still works afterwards.
	TestWorkloadsConcurrently(t)
}

func TestMeasureAndMemory(t *testing.T) {
	w := WorkloadByName(WorkloadTrivial)
	cfg := MeasureConfig{Warmup: 1, MinRuns: 2, MaxRuns: 3, Concurrency: []int{1, 2}, ThroughputBudget: time.Millisecond}
	for _, spec := range Variants() {
		v := shared.byName(t, spec.Name)
		m := Measure(context.Background(), v, w, cfg)
		if m.Err != "" || m.Runs < 2 || m.P50 <= 0 || m.Throughput[2] <= 0 {
			t.Errorf("%s: %+v", spec.Name, m)
		}
		mem := MeasureMemory(context.Background(), spec, 2, VariantConfig{})
		if mem.Err != "" {
			t.Errorf("%s memory: %s", spec.Name, mem.Err)
		}
		t.Logf("%s: %+v", spec.Name, mem)
	}
}

func TestReportRendersEverySection(t *testing.T) {
	cfg := DefaultReportConfig(true)
	cfg.Workloads = []string{WorkloadTrivial, WorkloadParallel10}
	cfg.Measure = MeasureConfig{Warmup: 0, MinRuns: 1, MaxRuns: 2, Concurrency: []int{1, 2}, ThroughputBudget: time.Millisecond}
	cfg.Workers = testWorkers
	cfg.MemoryN = 2
	cfg.NoConformance = true
	// The registered sections measure for tens of seconds (minutes under
	// -race); they run in `make bench` and TestGatewaySections. Here only
	// the rendering of an extra section is checked.
	registryMu.Lock()
	saved := sections
	sections = nil
	registryMu.Unlock()
	defer func() {
		registryMu.Lock()
		sections = saved
		registryMu.Unlock()
	}()
	RegisterSection(Section{Title: "Test section", Order: 1, Run: func(context.Context, ReportConfig) (string, error) {
		return "extra body", nil
	}})
	r, err := Collect(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	md := r.Markdown(cfg)
	for _, want := range []string{"## Machine and versions", "## Headline", "## Latency", "## Throughput",
		"## Go allocations", "## Memory per sandbox", "Goals against goja", "## Targets of issue 38", "ahead of `goja-loop` on every workload", "## TypeScript transform", "## Test section", "extra body",
		"`" + WorkloadParallel10 + "`", "`" + VariantGojaLoop + "`"} {
		if !strings.Contains(md, want) {
			t.Errorf("report lacks %q", want)
		}
	}
	// The issue-26 targets table comes right after the headline, fed by
	// the workload loop; the figures of sections that did not run are
	// "not measured".
	head, targets, latency := strings.Index(md, "## Headline"), strings.Index(md, "## Targets of issue 26"), strings.Index(md, "## Latency")
	if !(head >= 0 && head < targets && targets < latency) {
		t.Errorf("issue-26 targets at %d, want between the headline (%d) and the latency table (%d)", targets, head, latency)
	}
	table := md[targets:latency]
	if cells := targetLine(t, table, "trivial p50, thread"); !strings.HasSuffix(cells[colValue], " ms**") {
		t.Errorf("trivial p50 from the workload loop: %q", cells)
	}
	if cells := targetLine(t, table, "host call round trip, process ("); cells[colValue] != notMeasured {
		t.Errorf("the bridge section did not run, yet: %q", cells)
	}
	if t.Failed() {
		t.Log(md)
	}
}

// benchWorkload runs the named workload on every variant, checking each
// result.
func benchWorkload(b *testing.B, name string) {
	w := WorkloadByName(name)
	for _, v := range shared.get(b) {
		b.Run(v.Name(), func(b *testing.B) {
			skipHeavy(b, w)
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				got, err := v.Run(ctx, w)
				if err != nil {
					b.Fatal(err)
				}
				if err := w.Check(got); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkTrivial(b *testing.B)    { benchWorkload(b, WorkloadTrivial) }
func BenchmarkObjects10k(b *testing.B) { benchWorkload(b, WorkloadObjects10k) }
func BenchmarkFib27(b *testing.B)      { benchWorkload(b, WorkloadFib27) }
func BenchmarkJSON1MB(b *testing.B)    { benchWorkload(b, WorkloadJSON1MB) }
func BenchmarkParallel10x20ms(b *testing.B) {
	benchWorkload(b, WorkloadParallel10)
}
func BenchmarkSequential1000(b *testing.B) { benchWorkload(b, WorkloadSeq1000) }
func BenchmarkAgentChain(b *testing.B)     { benchWorkload(b, WorkloadAgentChain) }

// BenchmarkAgentChainParallel issues agent chains from GOMAXPROCS×4
// goroutines at once (throughput under concurrency).
func BenchmarkAgentChainParallel(b *testing.B) {
	w := WorkloadByName(WorkloadAgentChain)
	for _, v := range shared.get(b) {
		b.Run(v.Name(), func(b *testing.B) {
			b.SetParallelism(4)
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					got, err := v.Run(context.Background(), w)
					if err == nil {
						err = w.Check(got)
					}
					if err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
	}
}

// BenchmarkTransform measures the uncached esbuild step.
func BenchmarkTransform(b *testing.B) {
	w := WorkloadByName(WorkloadAgentChain)
	for b.Loop() {
		if _, err := compile(w.Source, V8Target); err != nil {
			b.Fatal(err)
		}
	}
}
