package bench

import (
	"fmt"
	"sync"
	"time"
)

// Figures is the record of named figures that a report's workload loop and
// sections fill as they measure, so that a table can put figures measured
// by different sections side by side (the issue-26 targets table) without
// measuring anything twice. Durations are kept in nanoseconds, sizes in
// MB, counts as they are; a figure's name says what it is (see the fig…
// helpers). A figure that could not be measured may carry the reason.
//
// It is safe for concurrent use. The methods of a nil *Figures record
// nothing and find nothing, so a section run outside a report (in a test)
// needs no record.
type Figures struct {
	mu     sync.Mutex
	values map[string]float64
	why    map[string]string
}

// NewFigures returns an empty record.
func NewFigures() *Figures {
	return &Figures{values: map[string]float64{}, why: map[string]string{}}
}

// Set records the figure called name.
func (f *Figures) Set(name string, v float64) {
	if f == nil {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.values[name] = v
	delete(f.why, name)
}

// SetDuration records a duration (kept in nanoseconds).
func (f *Figures) SetDuration(name string, d time.Duration) { f.Set(name, float64(d)) }

// NotMeasured records why the figure called name was not measured (when
// it was not measured at all, nothing needs recording).
func (f *Figures) NotMeasured(name, why string) {
	if f == nil {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, ok := f.values[name]; !ok {
		f.why[name] = why
	}
}

// Get returns the figure called name and whether it was recorded.
func (f *Figures) Get(name string) (float64, bool) {
	if f == nil {
		return 0, false
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	v, ok := f.values[name]
	return v, ok
}

// Why returns the recorded reason the figure called name is missing ("":
// none recorded).
func (f *Figures) Why(name string) string {
	if f == nil {
		return ""
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.why[name]
}

// Names of the recorded figures. Each helper documents its figure's unit.

// figP50 is the p50 latency at concurrency 1 of a workload on a variant,
// from the workload tables (nanoseconds).
func figP50(workload, variant string) string {
	return fmt.Sprintf("p50/%s/%s", workload, variant)
}

// figBridge is the p50 round trip of one host call on a bridge, from the
// host-call bridge section (nanoseconds). Bridges are named by variant
// (async host functions for the V8 variants).
func figBridge(variant string) string { return "bridge/" + variant }

// figBigTier3 and figBigDirect are the p50 of the 1 MB tool result through
// tier 3 and of the same call made directly on the backend, per isolation
// mode, from the issue-13 targets section (nanoseconds).
func figBigTier3(mode string) string  { return "1mb/tier3/" + mode }
func figBigDirect(mode string) string { return "1mb/direct/" + mode }

// figEcho is the p50 of one `echo` end to end over stdio, from the
// end-to-end section (nanoseconds): path is "direct" or
// "<isolation>/tier 2", "<isolation>/tier 3" or "<isolation>/passthrough".
func figEcho(path string) string { return "e2e-echo/" + path }

// figUTCP is the p50 of one of the UTCP comparison's programs (named as in
// [utcpWorkloads]) on a contender ("UTCP", "isogate thread" or "isogate
// process"), from the UTCP section (nanoseconds).
func figUTCP(program, contender string) string {
	return fmt.Sprintf("utcp/%s/%s", program, contender)
}

// Figures of the RSS probes (8 concurrent trivial runs) per isolation
// mode: figRSSPeak and figRSSBase in MB (the probe process and, in
// process mode, its worker processes), figRSSProcs the most processes
// seen in one sample, figRSSRuns the runs completed.
func figRSSPeak(mode string) string  { return "rss/peak/" + mode }
func figRSSBase(mode string) string  { return "rss/base/" + mode }
func figRSSProcs(mode string) string { return "rss/procs/" + mode }
func figRSSRuns(mode string) string  { return "rss/runs/" + mode }

// figPSSPeak is the peak proportional set size in MB of the same probe
// (pages shared by n processes count 1/n in each).
func figPSSPeak(mode string) string { return "pss/peak/" + mode }
