package metrics

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

var descStoreUp = prometheus.NewDesc("isogate_store_up",
	"1 when a store answers, 0 when it does not (store kv: the durable store of saved programs, their state and skills; "+
		"a bbolt file another process holds, a Redis that does not answer).", []string{"store"}, nil)

// storePingWait bounds a scrape's wait for a store's answer (a bbolt file
// held by another process answers after its open timeout, 2 s).
const storePingWait = 5 * time.Second

// ObserveStore reports at each scrape whether the store called name
// answers: ping returns nil when it does.
func (m *Metrics) ObserveStore(name string, ping func(context.Context) error) {
	if m == nil || ping == nil {
		return
	}
	m.reg.MustRegister(storeUpCollector{name: name, ping: ping})
}

type storeUpCollector struct {
	name string
	ping func(context.Context) error
}

// Describe implements prometheus.Collector.
func (c storeUpCollector) Describe(ch chan<- *prometheus.Desc) { ch <- descStoreUp }

// Collect implements prometheus.Collector.
func (c storeUpCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), storePingWait)
	defer cancel()
	up := 1.0
	if c.ping(ctx) != nil {
		up = 0
	}
	ch <- prometheus.MustNewConstMetric(descStoreUp, prometheus.GaugeValue, up, c.name)
}
