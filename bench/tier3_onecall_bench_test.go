package bench

import (
	"context"
	"testing"

	"github.com/isogate/isogate/config"
)

// BenchmarkTier3OneCall measures issue 38's engine rows through the real
// gateway engine in each isolation mode, as the report's engine section
// does (engineContenders): the contenders take turns, SampleGap apart, so
// that they share the machine's state: the direct call of `big.small` on the backend manager
// (the floor), the pool's own trivial run (the report's v8-pool, v8-proc
// in process mode), a trivial tier-3 run, and one tool call through tier
// 3. It reports each one's p50, trivial ÷ pool, one minus direct, one ÷
// direct and the stages of the one call (worker round trip = pool,
// engine = trivial − pool, bridge = one − trivial − direct).
//
//	go test -run '^$' -bench Tier3OneCall -benchtime 300x ./bench/
func BenchmarkTier3OneCall(b *testing.B) {
	defer quietDefaultLogger()()
	for _, mode := range []config.Isolation{config.IsolationThread, config.IsolationProcess} {
		b.Run(string(mode), func(b *testing.B) {
			p50, err := engineContenders(context.Background(), ReportConfig{}, mode, 1, b.N)
			if err != nil {
				b.Fatal(err)
			}
			for _, name := range []string{engineDirect, enginePool, engineTrivial, engineOne} {
				b.ReportMetric(float64(p50[name].Nanoseconds())/1e3, name+"-µs")
			}
			b.ReportMetric(float64(p50[engineTrivial])/float64(p50[enginePool]), "trivial/pool")
			b.ReportMetric(float64((p50[engineOne]-p50[engineDirect]).Nanoseconds())/1e3, "one-minus-direct-µs")
			// The stages of one call via tier 3 (issue 44), from the same
			// samples: the worker's round trip (the pool's trivial run), the
			// engine's own work around it (plan, tier, record, result:
			// trivial minus pool), and a host call's machinery and the
			// bridge (one minus trivial minus the direct call).
			b.ReportMetric(float64((p50[engineTrivial]-p50[enginePool]).Nanoseconds())/1e3, "stage-engine-µs")
			b.ReportMetric(float64((p50[engineOne]-p50[engineTrivial]-p50[engineDirect]).Nanoseconds())/1e3, "stage-bridge-µs")
			b.ReportMetric(float64(p50[engineOne])/float64(p50[engineDirect]), "one/direct")
		})
	}
}
