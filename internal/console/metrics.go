package console

import (
	"strings"
	"time"
)

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

// rates are the figures between prev and s.
func (s *sample) rates(prev *sample) map[string]any {
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
	return map[string]any{"t": s.at.UnixMilli(), "backends": out}
}
