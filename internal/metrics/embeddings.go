package metrics

import (
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Kinds of embeddings requests, the kind label of the
// isogate_search_embeddings_* series.
const (
	EmbedQuery = "query" // one search query's vector
	EmbedTools = "tools" // a batch of tool vectors
)

// embeddingMetrics are the isogate_search_embeddings_* series, registered
// when the first is recorded (search.embeddings.url set).
type embeddingMetrics struct {
	once      sync.Once
	requests  *prometheus.CounterVec
	duration  *prometheus.HistogramVec
	fallbacks *prometheus.CounterVec
	vectors   *prometheus.CounterVec
}

func (e *embeddingMetrics) register(reg *prometheus.Registry) {
	e.once.Do(func() {
		e.requests = prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "isogate_search_embeddings_requests_total",
			Help: "Requests to the embeddings endpoint (search.embeddings.url), by kind (query or tools) and outcome " +
				"(ok, timeout, unreachable, status, bad_response, dimension).",
		}, []string{"kind", "outcome"})
		e.duration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "isogate_search_embeddings_request_duration_seconds", Help: "Duration of requests to the embeddings endpoint, by kind.",
			Buckets: []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60},
		}, []string{"kind"})
		e.fallbacks = prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "isogate_search_embeddings_fallbacks_total",
			Help: "search_tools answers ranked lexically only, by reason (not_ready, timeout, error).",
		}, []string{"reason"})
		e.vectors = prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "isogate_search_embeddings_tool_vectors_total",
			Help: "Tool vectors obtained, by source: computed (asked of the endpoint), stored (read from the store another " +
				"replica or an earlier catalogue filled) or reused (unchanged tools of the previous catalogue).",
		}, []string{"source"})
		reg.MustRegister(e.requests, e.duration, e.fallbacks, e.vectors)
	})
}

// EmbeddingRequest records one request to the embeddings endpoint: kind is
// [EmbedQuery] or [EmbedTools], outcome "ok" or the failure's kind.
func (m *Metrics) EmbeddingRequest(kind, outcome string, took time.Duration) {
	if m == nil {
		return
	}
	m.embed.register(m.reg)
	m.embed.requests.WithLabelValues(kind, outcome).Inc()
	m.embed.duration.WithLabelValues(kind).Observe(took.Seconds())
}

// EmbeddingFallback records one search answered lexically only, and why.
func (m *Metrics) EmbeddingFallback(reason string) {
	if m == nil {
		return
	}
	m.embed.register(m.reg)
	m.embed.fallbacks.WithLabelValues(reason).Inc()
}

// EmbeddingVectors records n tool vectors obtained from source
// ("computed", "stored" or "reused").
func (m *Metrics) EmbeddingVectors(source string, n int) {
	if m == nil || n == 0 {
		return
	}
	m.embed.register(m.reg)
	m.embed.vectors.WithLabelValues(source).Add(float64(n))
}
