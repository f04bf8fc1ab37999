package console

import (
	"strings"
	"sync"
	"time"
)

// The metrics history the console keeps, so that its Metrics page is full
// on arrival: one point per metricsEvery over the last metricsSpan, each
// point every backend's calls, errors and mean latency over its interval.
const (
	metricsEvery = 10 * time.Second
	metricsSpan  = 15 * time.Minute
	// maxPoints bounds the history (its memory: a point per interval, each
	// a few numbers per backend).
	maxPoints = int(metricsSpan / metricsEvery)
)

// history is the metrics history: complete points, oldest first, and the
// sample the next point starts from.
type history struct {
	mu     sync.Mutex
	points []point
	last   *sample
	// made counts the points ever made (a stream sends the history again
	// when it changed).
	made int
}

// add takes sample s: the point from the last sample to s joins the
// history, the oldest leaving past maxPoints.
func (h *history) add(s *sample) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.last != nil {
		if len(h.points) == maxPoints {
			copy(h.points, h.points[1:])
			h.points = h.points[:maxPoints-1]
		}
		h.points = append(h.points, s.rates(h.last))
		h.made++
	}
	h.last = s
}

// series is the history and, from its last sample to now (sample now),
// the point in progress (nil when there is no sample yet).
func (h *history) series(now *sample) (points []point, tail *point, made int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	points = append([]point(nil), h.points...)
	if h.last != nil && now.at.After(h.last.at) {
		p := now.rates(h.last)
		tail = &p
	}
	return points, tail, h.made
}

// sampleMetrics adds a point to the history every metricsEvery until stop
// is closed.
func (c *Console) sampleMetrics(stop <-chan struct{}) {
	t := time.NewTicker(metricsEvery)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
			c.metrics.add(c.sample())
		}
	}
}

// metricsData is the Metrics page's data: the history, with the point in
// progress, as the page's script reads it.
type metricsData struct {
	Points []point `json:"points"`
	Tail   *point  `json:"tail"`
	// SpanMS and EveryMS are the history's span and its points' interval.
	SpanMS  int64 `json:"span_ms"`
	EveryMS int64 `json:"every_ms"`
}

func (c *Console) metricsSeries() (metricsData, int) {
	points, tail, made := c.metrics.series(c.sample())
	return metricsData{Points: points, Tail: tail, SpanMS: metricsSpan.Milliseconds(), EveryMS: metricsEvery.Milliseconds()}, made
}

// sample is the cumulative counters of every backend at one moment.
type sample struct {
	at       time.Time
	backends []string
	calls    map[string]int64
	errors   map[string]int64
	totalMS  map[string]int64 // from the per-tool counters
	toolCall map[string]int64
}

func (c *Console) sample() *sample {
	s := &sample{at: time.Now(), calls: map[string]int64{}, errors: map[string]int64{}, totalMS: map[string]int64{}, toolCall: map[string]int64{}}
	if c.src.Backends != nil {
		for _, st := range c.src.Backends() {
			s.backends = append(s.backends, st.Name)
			s.calls[st.Name], s.errors[st.Name] = st.Calls, st.Errors
		}
	}
	if c.src.Stats != nil {
		for _, t := range c.src.Stats().Tools {
			b, _, _ := strings.Cut(t.Name, ".")
			s.totalMS[b] += t.TotalMS
			s.toolCall[b] += t.Calls
		}
	}
	return s
}

// rate is one backend's figures over the last interval.
type rate struct {
	Backend   string  `json:"backend"`
	Calls     float64 `json:"calls_per_s"`
	Errors    float64 `json:"errors_per_s"`
	LatencyMS float64 `json:"latency_ms"`
}

// point is every backend's figures over one interval, from From to T
// (Unix milliseconds).
type point struct {
	From     int64  `json:"from"`
	T        int64  `json:"t"`
	Backends []rate `json:"backends"`
}

// rates are the figures between prev and s.
func (s *sample) rates(prev *sample) point {
	secs := s.at.Sub(prev.at).Seconds()
	if secs <= 0 {
		secs = 1
	}
	out := []rate{}
	for _, b := range s.backends {
		r := rate{Backend: b, Calls: float64(s.calls[b]-prev.calls[b]) / secs, Errors: float64(s.errors[b]-prev.errors[b]) / secs}
		if n := s.toolCall[b] - prev.toolCall[b]; n > 0 {
			r.LatencyMS = float64(s.totalMS[b]-prev.totalMS[b]) / float64(n)
		}
		out = append(out, r)
	}
	return point{From: prev.at.UnixMilli(), T: s.at.UnixMilli(), Backends: out}
}
