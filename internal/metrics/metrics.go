// Package metrics exposes the gateway's Prometheus metrics. Hot paths call
// two small hooks ([Metrics.ToolCall], [Metrics.Run]); the state of backends
// and sandbox workers is read from [Sources] when a scrape asks for it.
//
// Label values are bounded: backend names come from the configuration, tool
// names only from the catalogue (others are "other"), tiers, outcomes, states
// and causes from fixed sets. No code or arguments ever become a label.
package metrics

import (
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Other is the label value of a backend or tool outside the catalogue.
const Other = "other"

// Tool call outcomes.
const (
	OutcomeOK        = "ok"         // the tool returned a result
	OutcomeToolError = "tool_error" // the tool returned a result with isError
	OutcomeError     = "error"      // the call failed (backend down, refused, protocol error)
	OutcomeTimeout   = "timeout"    // the call's deadline passed
	OutcomeCancelled = "cancelled"  // the caller went away
)

// BackendState is one backend as the metrics see it.
type BackendState struct {
	Name     string
	Up       bool
	Restarts int
}

// Workers describes the sandbox workers: how many are in each state
// ("busy", "idle", "draining") and how many died, by cause ("crashed",
// "killed", "recycled"; cumulative).
type Workers struct {
	States map[string]int
	Deaths map[string]uint64
}

// Sources are read at scrape time; nil sources report nothing.
type Sources struct {
	Backends func() []BackendState
	Workers  func() Workers
	// Confinement is what the sandbox workers obtained, layer by layer
	// (process isolation; none before a worker has started).
	Confinement func() []LayerLevel
	// Checker is the type checker's state; nil (or a nil result) when
	// sandbox.typecheck is off.
	Checker func() *Checker
	// TaskIntents is the number of task requests read by the gateway's
	// boundary whose call has not started yet.
	TaskIntents func() int
	// StoreBytes is what each of the gateway's stores ("results", "runs")
	// holds, in the bytes it charges against its cap; nil: not reported.
	StoreBytes func() map[string]int64
}

// LayerLevel is the level a confinement layer was obtained at.
type LayerLevel struct {
	Layer, Level string
}

// Metrics is one gateway's set of metrics, on its own registry. A nil
// *Metrics records nothing.
type Metrics struct {
	reg       *prometheus.Registry
	toolCalls *prometheus.CounterVec
	toolTime  *prometheus.HistogramVec
	runs      *prometheus.CounterVec
	runTime   *prometheus.HistogramVec
	processed prometheus.Counter
	returned  prometheus.Counter
	received  prometheus.Counter
	authRejct *prometheus.CounterVec
	shareHits *prometheus.CounterVec
	checker   checkerMetrics
	storeFull *prometheus.CounterVec
	embed     embeddingMetrics // registered on first use (embeddings.go)
}

// New registers the metrics (and the Go runtime and process collectors) on
// a fresh registry.
func New(src Sources) *Metrics {
	m := &Metrics{reg: prometheus.NewRegistry()}
	m.toolCalls = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "isogate_tool_calls_total", Help: "Backend tool calls, by backend, catalogue tool and outcome.",
	}, []string{"backend", "tool", "outcome"})
	m.toolTime = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: "isogate_tool_call_duration_seconds", Help: "Duration of backend tool calls.",
		Buckets: []float64{.001, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30},
	}, []string{"backend"})
	m.runs = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "isogate_runs_total", Help: "Code-mode runs, by tier and outcome (ok or the error code).",
	}, []string{"tier", "outcome"})
	m.runTime = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: "isogate_run_duration_seconds", Help: "Duration of code-mode runs.",
		Buckets: []float64{.0005, .001, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30},
	}, []string{"tier"})
	output := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "isogate_output_bytes_total", Help: "Bytes code-mode programs produced (processed), returned to the agent (returned) and " +
			"received from backends through their tool calls (received; received minus returned stayed out of the agent's context).",
	}, []string{"kind"})
	m.processed, m.returned = output.WithLabelValues("processed"), output.WithLabelValues("returned")
	m.received = output.WithLabelValues("received")
	m.authRejct = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "isogate_auth_rejections_total", Help: "HTTP requests refused by authentication (401/403), by reason.",
	}, []string{"reason"})
	m.shareHits = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "isogate_principal_share_hits_total",
		Help: "Acquisitions of a sandbox or backend call slot that found their principal at its share, by pool " +
			"(sandbox, run_code, or backend), backend (\"\" for the sandbox pools) and outcome (waited or refused).",
	}, []string{"pool", "backend", "outcome"})
	m.storeFull = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "isogate_store_refusals_total", Help: "Entries a store refused at its byte cap (STORE_FULL), by store (results or runs), and programs' state writes refused at a quota (store state).",
	}, []string{"store"})
	m.checker = newCheckerMetrics()
	m.reg.MustRegister(m.toolCalls, m.toolTime, m.runs, m.runTime, output, m.authRejct, m.shareHits, m.storeFull,
		m.checker.checks, m.checker.duration,
		&stateCollector{src: src},
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// StoreRefusal counts an entry store refused at its byte cap.
func (m *Metrics) StoreRefusal(store string) {
	if m == nil {
		return
	}
	m.storeFull.WithLabelValues(store).Inc()
}

// Handler serves the metrics in the Prometheus text format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{})
}

// Registry returns the registry the metrics are on.
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

// ToolCall records one backend tool call. tool must already be bounded
// (a catalogue tool or [Other]).
func (m *Metrics) ToolCall(backend, tool, outcome string, took time.Duration) {
	if m == nil {
		return
	}
	m.toolCalls.WithLabelValues(backend, tool, outcome).Inc()
	m.toolTime.WithLabelValues(backend).Observe(took.Seconds())
}

// Run records one code-mode run and the bytes it processed, returned and
// received from backends.
func (m *Metrics) Run(tier, outcome string, took time.Duration, processed, returned, received int) {
	if m == nil {
		return
	}
	m.runs.WithLabelValues(tier, outcome).Inc()
	m.runTime.WithLabelValues(tier).Observe(took.Seconds())
	m.processed.Add(float64(processed))
	m.returned.Add(float64(returned))
	m.received.Add(float64(received))
}

// AuthRejection records one request refused by authentication; reason is
// one of a fixed set (authn.Reason), never token material.
func (m *Metrics) AuthRejection(reason string) {
	if m == nil {
		return
	}
	m.authRejct.WithLabelValues(reason).Inc()
}

// Pools of slots shared between principals, the pool label of
// [Metrics.ShareHit].
const (
	PoolSandbox = "sandbox"  // code mode's V8 runs (sandbox.max_concurrent)
	PoolRunCode = "run_code" // run_code's programs
	PoolBackend = "backend"  // a backend's call slots (max_concurrent_calls)
)

// ShareHit records one acquisition of a slot of pool that found its
// principal at its share; backend names the backend of [PoolBackend] ("" for
// the others) and outcome is "waited" or "refused". No principal becomes a
// label.
func (m *Metrics) ShareHit(pool, backend, outcome string) {
	if m == nil {
		return
	}
	m.shareHits.WithLabelValues(pool, backend, outcome).Inc()
}

// stateCollector reads backends and workers when scraped.
type stateCollector struct{ src Sources }

var (
	descUp       = prometheus.NewDesc("isogate_backend_up", "1 when the backend is connected and healthy.", []string{"backend"}, nil)
	descRestarts = prometheus.NewDesc("isogate_backend_restarts_total", "Restarts of the backend.", []string{"backend"}, nil)
	descWorkers  = prometheus.NewDesc("isogate_sandbox_workers", "Sandbox workers by state.", []string{"state"}, nil)
	descDeaths   = prometheus.NewDesc("isogate_sandbox_deaths_total", "Sandbox worker processes that died, by cause.", []string{"cause"}, nil)
	descConfined = prometheus.NewDesc("isogate_sandbox_confinement", "1 for the level each confinement layer of the sandbox workers was obtained at.", []string{"layer", "level"}, nil)
	descStore    = prometheus.NewDesc("isogate_store_bytes", "Bytes a store holds as charged against its cap (its data and bookkeeping), by store (results or runs); for Redis, shared by every replica.", []string{"store"}, nil)
	descIntents  = prometheus.NewDesc("isogate_task_intents", "Task requests (task-augmented tools/call, tasks/result) in flight whose call has not started yet.", nil, nil)
)

// Describe implements prometheus.Collector.
func (c *stateCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- descUp
	ch <- descRestarts
	ch <- descWorkers
	ch <- descDeaths
	ch <- descConfined
	ch <- descIntents
	ch <- descStore
	describeChecker(ch)
}

// Collect implements prometheus.Collector.
func (c *stateCollector) Collect(ch chan<- prometheus.Metric) {
	if c.src.Backends != nil {
		for _, b := range c.src.Backends() {
			up := 0.0
			if b.Up {
				up = 1
			}
			ch <- prometheus.MustNewConstMetric(descUp, prometheus.GaugeValue, up, b.Name)
			ch <- prometheus.MustNewConstMetric(descRestarts, prometheus.CounterValue, float64(b.Restarts), b.Name)
		}
	}
	if c.src.Workers != nil {
		w := c.src.Workers()
		for state, n := range w.States {
			ch <- prometheus.MustNewConstMetric(descWorkers, prometheus.GaugeValue, float64(n), state)
		}
		for cause, n := range w.Deaths {
			ch <- prometheus.MustNewConstMetric(descDeaths, prometheus.CounterValue, float64(n), cause)
		}
	}
	if c.src.Confinement != nil {
		for _, l := range c.src.Confinement() {
			ch <- prometheus.MustNewConstMetric(descConfined, prometheus.GaugeValue, 1, l.Layer, l.Level)
		}
	}
	if c.src.StoreBytes != nil {
		for store, n := range c.src.StoreBytes() {
			ch <- prometheus.MustNewConstMetric(descStore, prometheus.GaugeValue, float64(n), store)
		}
	}
	if c.src.TaskIntents != nil {
		ch <- prometheus.MustNewConstMetric(descIntents, prometheus.GaugeValue, float64(c.src.TaskIntents()))
	}
	if c.src.Checker != nil {
		if st := c.src.Checker(); st != nil {
			collectChecker(ch, *st)
		}
	}
}
