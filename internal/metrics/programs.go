package metrics

import "github.com/prometheus/client_golang/prometheus"

var (
	descProgramsSaved = prometheus.NewDesc("isogate_programs_saved",
		"Saved programs (save_program), every principal's; for Redis, shared by every replica.", nil, nil)
	descProgramsStale = prometheus.NewDesc("isogate_programs_stale",
		"Versions of saved programs that no longer check against the catalogue (a call of one gives PROGRAM_STALE).", nil, nil)
)

// ObservePrograms reports the saved programs at each scrape: counts
// returns how many are saved and how many versions are stale, ok false
// when it cannot tell (their store did not answer: neither is reported).
func (m *Metrics) ObservePrograms(counts func() (saved, stale int, ok bool)) {
	if m == nil || counts == nil {
		return
	}
	m.reg.MustRegister(programsCollector(counts))
}

type programsCollector func() (saved, stale int, ok bool)

// Describe implements prometheus.Collector.
func (c programsCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- descProgramsSaved
	ch <- descProgramsStale
}

// Collect implements prometheus.Collector.
func (c programsCollector) Collect(ch chan<- prometheus.Metric) {
	saved, stale, ok := c()
	if !ok {
		return
	}
	ch <- prometheus.MustNewConstMetric(descProgramsSaved, prometheus.GaugeValue, float64(saved))
	ch <- prometheus.MustNewConstMetric(descProgramsStale, prometheus.GaugeValue, float64(stale))
}
