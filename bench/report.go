package bench

import (
	"context"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/evanw/esbuild/pkg/api"

	"github.com/isogate/isogate/bench/conformance"
)

// ReportConfig configures [WriteReport].
type ReportConfig struct {
	// Quick shortens every budget (the whole report in about two minutes).
	Quick bool
	// Measure bounds each workload × variant measurement.
	Measure MeasureConfig
	// Workers is the pool size of pooled variants; it should be the
	// highest concurrency measured.
	Workers int
	// MemoryN is how many sandboxes are held at once to measure memory.
	MemoryN int
	// WorkerCommand is the sandbox worker command of process-isolated
	// variants (nil: their default).
	WorkerCommand []string
	// Variants and Workloads select what is measured by name (empty: all).
	Variants, Workloads []string
	// Sections, when not empty, runs only the extra sections it names (by
	// [Section].Name or a part of the title, see [Section.Matches]) and
	// nothing else: no workload grid, memory, transform or conformance.
	Sections []string
	// With adds opt-in sections ([Section].OptIn), by the same selectors,
	// to a whole report (one without Sections).
	With []string
	// ConformanceTimeout bounds each conformance check.
	ConformanceTimeout time.Duration
	// Smoke shrinks the sections of issues 32, 35 and 36 to a sample or
	// two each: for tests that check they run and render, not for figures.
	Smoke bool
	// NoConformance skips the conformance set.
	NoConformance bool
	// Progress receives one line per step (nil: nothing).
	Progress io.Writer
	// Figures records named figures as the workload loop and the sections
	// measure them, for the tables that put several sections' figures side
	// by side (see [Figures]). [Collect] starts a new record when it is
	// nil; sections may record into it and must accept nil.
	Figures *Figures
}

// SampleGap is the pause before each latency sample in the report: requests
// at rest, as an agent sends them (see [MeasureConfig].Gap).
const SampleGap = 5 * time.Millisecond

// DefaultReportConfig returns the standard budgets; quick trades precision
// for time.
func DefaultReportConfig(quick bool) ReportConfig {
	cfg := ReportConfig{
		Quick:   quick,
		Workers: 8,
		MemoryN: 16,
		Measure: MeasureConfig{
			Warmup: 2, MinRuns: 5, MaxRuns: 2000,
			LatencyBudget:    2 * time.Second,
			Concurrency:      []int{1, 2, 8},
			ThroughputBudget: 1500 * time.Millisecond,
			Rounds:           4,
			Gap:              SampleGap,
		},
		ConformanceTimeout: 5 * time.Second,
	}
	if quick {
		cfg.Measure.Warmup = 1
		cfg.Measure.MinRuns = 3
		cfg.Measure.MaxRuns = 300
		cfg.Measure.LatencyBudget = 500 * time.Millisecond
		cfg.Measure.ThroughputBudget = 400 * time.Millisecond
		cfg.Measure.Rounds = 2
	}
	return cfg
}

func (c *ReportConfig) progress(format string, args ...any) {
	if c.Progress != nil {
		fmt.Fprintf(c.Progress, format+"\n", args...)
	}
}

func selected(names []string, name string) bool {
	return len(names) == 0 || slices.Contains(names, name)
}

// Results holds everything measured for a report.
type Results struct {
	Env          Environment
	Started      time.Time
	Elapsed      time.Duration
	LoadAfter    string
	Variants     []VariantSpec
	Unavailable  map[string]string // variant → why it was not measured
	Workloads    []*Workload
	Measurements map[string]map[string]Measurement // workload → variant → m
	Memory       []MemoryMeasurement
	Transform    TransformCost
	Conformance  []ConformanceColumn
	Sections     []RenderedSection
	// SectionsOnly is set when only selected sections ran
	// ([ReportConfig].Sections).
	SectionsOnly bool
	// Figures are the named figures recorded during the report.
	Figures *Figures
}

// TransformCost is the cost of the esbuild step, common to every variant.
type TransformCost struct {
	Workload string
	P50, P99 time.Duration
	Runs     int
}

// ConformanceColumn is the conformance set run one way.
type ConformanceColumn struct {
	Name string
	// Transformed is true when the checks went through esbuild: checks
	// that inspect their own source text do not apply.
	Transformed bool
	Outcomes    []conformance.Outcome
}

// applies reports whether outcome i is meaningful in this column.
func (c ConformanceColumn) applies(i int) bool {
	return !c.Transformed || !c.Outcomes[i].Check.SourceSensitive()
}

// Score returns the passing and applicable checks.
func (c ConformanceColumn) Score() (passed, total int) {
	for i, o := range c.Outcomes {
		if !c.applies(i) {
			continue
		}
		total++
		if o.Pass {
			passed++
		}
	}
	return passed, total
}

// RenderedSection is an extra section's output.
type RenderedSection struct {
	Title, Body string
}

// Collect runs every measurement selected by cfg.
func Collect(ctx context.Context, cfg ReportConfig) (*Results, error) {
	if cfg.Figures == nil {
		cfg.Figures = NewFigures()
	}
	r := &Results{
		Figures:      cfg.Figures,
		Env:          DescribeEnvironment(),
		Started:      time.Now(),
		Unavailable:  map[string]string{},
		Measurements: map[string]map[string]Measurement{},
	}
	if len(cfg.Sections) > 0 {
		r.SectionsOnly = true
		runSections(ctx, cfg, r)
		r.Elapsed = time.Since(r.Started)
		r.LoadAfter = LoadAvg()
		return r, ctx.Err()
	}
	vcfg := VariantConfig{Workers: cfg.Workers, WorkerCommand: cfg.WorkerCommand}
	for _, s := range Variants() {
		if selected(cfg.Variants, s.Name) {
			r.Variants = append(r.Variants, s)
		}
	}
	for _, w := range Workloads() {
		if selected(cfg.Workloads, w.Name) {
			r.Workloads = append(r.Workloads, w)
		}
	}

	// Memory first, while the process is small. One throwaway V8 run
	// initializes the platform (~10 MB, paid once per process).
	warm := NewV8Pool(1)
	if _, err := warm.Run(ctx, workloadByNameOr(r.Workloads, WorkloadTrivial)); err != nil {
		warm.Close()
		return nil, fmt.Errorf("v8 warm-up: %w", err)
	}
	warm.Close()
	for _, s := range r.Variants {
		cfg.progress("memory: %s (%d sandboxes)", s.Name, cfg.MemoryN)
		m := MeasureMemory(ctx, s, cfg.MemoryN, vcfg)
		r.Memory = append(r.Memory, m)
	}

	built := map[string]Variant{}
	defer func() {
		for _, v := range built {
			v.Close()
		}
	}()
	for _, s := range r.Variants {
		v, err := s.New(vcfg)
		if err != nil {
			r.Unavailable[s.Name] = err.Error()
			cfg.progress("variant %s unavailable: %v", s.Name, err)
			continue
		}
		built[s.Name] = v
	}

	var measured []Variant
	for _, s := range r.Variants {
		if v := built[s.Name]; v != nil {
			measured = append(measured, v)
		}
	}
	for _, w := range r.Workloads {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		cfg.progress("measure: %s on %d variants, side by side", w.Name, len(measured))
		r.Measurements[w.Name] = map[string]Measurement{}
		for _, m := range MeasureSideBySide(ctx, measured, w, cfg.Measure) {
			if m.Err != "" {
				cfg.progress("  %-10s error: %s", m.Variant, m.Err)
			} else {
				cfg.Figures.SetDuration(figP50(w.Name, m.Variant), m.P50)
				cfg.progress("  %-10s p50 %v p99 %v (%d runs) %s", m.Variant, m.P50.Round(time.Microsecond),
					m.P99.Round(time.Microsecond), m.Runs, formatThroughput(m))
			}
			r.Measurements[w.Name][m.Variant] = m
		}
	}

	cfg.progress("esbuild transform cost")
	r.Transform = MeasureTransform(workloadByNameOr(r.Workloads, WorkloadAgentChain), cfg.Measure.LatencyBudget)

	type column struct {
		name, variant string
		raw           bool
	}
	columns := []column{
		{"V8 (isogate pool)", VariantV8Pool, true},
		{"V8 via esbuild ES2022", VariantV8Pool, false},
		{"goja", VariantGojaSync, true},
		{"goja via esbuild " + targetName(GojaTarget), VariantGojaSync, false},
	}
	for _, c := range columns {
		v := built[c.variant]
		if v == nil || cfg.NoConformance {
			continue
		}
		cfg.progress("conformance: %s", c.name)
		out := conformance.Run(ctx, conformance.Checks, cfg.ConformanceTimeout, ConformanceRunner(v, c.raw))
		r.Conformance = append(r.Conformance, ConformanceColumn{Name: c.name, Transformed: !c.raw, Outcomes: out})
	}

	runSections(ctx, cfg, r)
	r.Elapsed = time.Since(r.Started)
	r.LoadAfter = LoadAvg()
	return r, nil
}

// runSections runs the extra sections cfg selects (every one when
// cfg.Sections is empty) into r.
func runSections(ctx context.Context, cfg ReportConfig, r *Results) {
	for _, s := range Sections() {
		if !sectionSelected(cfg.Sections, cfg.With, s) {
			continue
		}
		cfg.progress("section: %s", s.Title)
		body, err := s.Run(ctx, cfg)
		if err != nil {
			body = "Not measured: " + err.Error()
		}
		r.Sections = append(r.Sections, RenderedSection{Title: s.Title, Body: body})
	}
}

// sectionSelected reports whether the selectors sels pick s (none: all
// but the opt-in ones, and those with picks).
func sectionSelected(sels, with []string, s Section) bool {
	if len(sels) == 0 {
		return !s.OptIn || slices.ContainsFunc(with, s.Matches)
	}
	return slices.ContainsFunc(sels, s.Matches)
}

// workloadByNameOr returns the workload called name from ws, or the
// registered workload of that name, or the first of ws.
func workloadByNameOr(ws []*Workload, name string) *Workload {
	for _, w := range ws {
		if w.Name == name {
			return w
		}
	}
	if w := WorkloadByName(name); w != nil {
		return w
	}
	return ws[0]
}

// MeasureTransform measures the uncached esbuild step for w, per target.
func MeasureTransform(w *Workload, budget time.Duration) TransformCost {
	var samples []time.Duration
	start := time.Now()
	for len(samples) < 5 || (len(samples) < 2000 && time.Since(start) < budget) {
		t0 := time.Now()
		if _, err := compile(w.Source, V8Target); err != nil {
			break
		}
		samples = append(samples, time.Since(t0))
	}
	sort.Slice(samples, func(i, j int) bool { return samples[i] < samples[j] })
	return TransformCost{Workload: w.Name, P50: Percentile(samples, 50), P99: Percentile(samples, 99), Runs: len(samples)}
}

// targetName names an esbuild target ("ES2017").
func targetName(t api.Target) string {
	switch {
	case t == api.ESNext:
		return "ESNext"
	case t == api.ES5:
		return "ES5"
	case t >= api.ES2015:
		return fmt.Sprintf("ES%d", 2015+int(t-api.ES2015))
	}
	return "default"
}

func formatThroughput(m Measurement) string {
	var parts []string
	levels := make([]int, 0, len(m.Throughput))
	for c := range m.Throughput {
		levels = append(levels, c)
	}
	sort.Ints(levels)
	for _, c := range levels {
		parts = append(parts, fmt.Sprintf("c%d %.1f/s", c, m.Throughput[c]))
	}
	return strings.Join(parts, " ")
}

// WriteReport collects every measurement and writes RESULTS.md to out.
func WriteReport(ctx context.Context, cfg ReportConfig, out io.Writer) error {
	r, err := Collect(ctx, cfg)
	if err != nil {
		return err
	}
	_, err = io.WriteString(out, r.Markdown(cfg))
	return err
}
