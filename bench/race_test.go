//go:build race

package bench

// raceEnabled is true when the tests run under the race detector, which
// slows goja (pure Go) by an order of magnitude: heavy workloads are skipped.
const raceEnabled = true
