package metrics

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Checker is the type checker (sandbox.typecheck warn or strict) as the
// metrics see it, read at scrape time.
type Checker struct {
	// State is one of States; Up is State "ready".
	State  string
	States []string
	// Worker is true when a checker worker process is alive (process
	// isolation): RSSBytes and Uptime are then its.
	Worker   bool
	RSSBytes int64
	Uptime   time.Duration
	// Restarts counts checker worker processes started after the first
	// (in process: compiler isolates built again).
	Restarts      uint64
	HeapUsedBytes int64
	// CodeCache counts what was done with the compiler's code cache file,
	// by event (hit, miss, rejected, invalid, written); CodeCacheBytes is
	// the file's size.
	CodeCache      map[string]int64
	CodeCacheBytes int64
}

var (
	descCheckerUp      = prometheus.NewDesc("isogate_typecheck_up", "1 when the type checker is ready (compiler loaded; in process isolation its worker serving).", nil, nil)
	descCheckerState   = prometheus.NewDesc("isogate_typecheck_state", "1 for the type checker's current state.", []string{"state"}, nil)
	descCheckerRestart = prometheus.NewDesc("isogate_typecheck_restarts_total", "Type checker worker processes started after the first (in process: compiler isolates rebuilt).", nil, nil)
	descCheckerRSS     = prometheus.NewDesc("isogate_typecheck_worker_rss_bytes", "Resident memory of the type checker's worker process.", nil, nil)
	descCheckerUptime  = prometheus.NewDesc("isogate_typecheck_worker_uptime_seconds", "Age of the type checker's worker process.", nil, nil)
	descCheckerHeap    = prometheus.NewDesc("isogate_typecheck_heap_used_bytes", "The type checker's V8 heap in use after its last check.", nil, nil)
	descCheckerCache   = prometheus.NewDesc("isogate_typecheck_code_cache_total", "What was done with the type checker's code cache file, by event (hit, miss, rejected, invalid, written).", []string{"event"}, nil)
	descCheckerCacheB  = prometheus.NewDesc("isogate_typecheck_code_cache_bytes", "Size of the type checker's code cache file (0 while there is none).", nil, nil)
)

// checkerMetrics are the hooks' metrics of the checks.
type checkerMetrics struct {
	checks   *prometheus.CounterVec
	duration prometheus.Histogram
}

func newCheckerMetrics() checkerMetrics {
	return checkerMetrics{
		checks: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "isogate_typecheck_checks_total",
			Help: "Type checks of code-mode programs, by outcome (ok, refused, failed, timeout, skipped, cancelled).",
		}, []string{"outcome"}),
		duration: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "isogate_typecheck_check_duration_seconds",
			Help:    "Duration of the type checks made (every outcome but skipped), waiting for the checker included.",
			Buckets: []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30},
		}),
	}
}

// Check records one type check of a program: outcome is ok, refused,
// failed, timeout, cancelled or skipped (the checker was not ready: no
// duration).
func (m *Metrics) Check(outcome string, took time.Duration) {
	if m == nil {
		return
	}
	m.checker.checks.WithLabelValues(outcome).Inc()
	if outcome != "skipped" {
		m.checker.duration.Observe(took.Seconds())
	}
}

func describeChecker(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descCheckerUp, descCheckerState, descCheckerRestart, descCheckerRSS,
		descCheckerUptime, descCheckerHeap, descCheckerCache, descCheckerCacheB} {
		ch <- d
	}
}

func collectChecker(ch chan<- prometheus.Metric, c Checker) {
	up := 0.0
	if c.State == "ready" {
		up = 1
	}
	ch <- prometheus.MustNewConstMetric(descCheckerUp, prometheus.GaugeValue, up)
	for _, s := range c.States {
		v := 0.0
		if s == c.State {
			v = 1
		}
		ch <- prometheus.MustNewConstMetric(descCheckerState, prometheus.GaugeValue, v, s)
	}
	ch <- prometheus.MustNewConstMetric(descCheckerRestart, prometheus.CounterValue, float64(c.Restarts))
	if c.Worker {
		ch <- prometheus.MustNewConstMetric(descCheckerRSS, prometheus.GaugeValue, float64(c.RSSBytes))
		ch <- prometheus.MustNewConstMetric(descCheckerUptime, prometheus.GaugeValue, c.Uptime.Seconds())
	}
	ch <- prometheus.MustNewConstMetric(descCheckerHeap, prometheus.GaugeValue, float64(c.HeapUsedBytes))
	for event, n := range c.CodeCache {
		ch <- prometheus.MustNewConstMetric(descCheckerCache, prometheus.CounterValue, float64(n), event)
	}
	ch <- prometheus.MustNewConstMetric(descCheckerCacheB, prometheus.GaugeValue, float64(c.CodeCacheBytes))
}

// InitChecks makes the checks' counter report 0 for each outcome before
// the first check (sandbox.typecheck on), so that rates start from it.
func (m *Metrics) InitChecks(outcomes []string) {
	if m == nil {
		return
	}
	for _, o := range outcomes {
		m.checker.checks.WithLabelValues(o)
	}
}
