package typecheck

import (
	"os"
	"sync"
	"time"
)

// The states of a checker ([Status].State).
const (
	// StateNotStarted: nothing has asked for the compiler yet.
	StateNotStarted = "not_started"
	// StateStarting: the compiler is loading (in process isolation, its
	// worker is starting); runs wait for it, within their deadline.
	StateStarting = "starting"
	// StateReady: a check costs only the check.
	StateReady = "ready"
	// StateRestarting: the checker worker died (or was killed) and its
	// replacement is not serving yet; runs wait for it, within their
	// deadline.
	StateRestarting = "restarting"
	// StateFailed: the checker could not start (Status.Error says why);
	// strict refuses programs (TYPECHECK_UNAVAILABLE), warn runs them with
	// a notice.
	StateFailed = "failed"
)

// States lists every [Status].State, for the metrics.
var States = []string{StateNotStarted, StateStarting, StateReady, StateRestarting, StateFailed}

// Where a checker runs ([Status].Where).
const (
	WhereInProcess = "in_process" // thread isolation: in the gateway's process
	WhereWorker    = "worker"     // process isolation: in a checker worker process
)

// Status is a checker's state for operators: /readyz, isogate doctor,
// isogate://stats and the metrics report it.
type Status struct {
	State string `json:"state"`
	// Error says why the checker is not ready when it failed (or why its
	// worker last died or failed to start).
	Error string `json:"error,omitempty"`
	Where string `json:"where"`
	// Worker is the live checker worker process (process isolation), nil
	// while there is none.
	Worker *WorkerStatus `json:"worker,omitempty"`
	// Restarts counts the checker worker processes started after the
	// first (process isolation), or the compiler isolates built again
	// after a check cut short (in process).
	Restarts uint64 `json:"restarts"`
	// HeapUsedBytes is the compiler isolate's used heap after its last
	// check (0 before the first, and after a restart until its next one).
	HeapUsedBytes int64           `json:"heap_used_bytes"`
	CodeCache     CodeCacheStatus `json:"code_cache"`
}

// WorkerStatus describes a live checker worker process.
type WorkerStatus struct {
	PID           int     `json:"pid"`
	RSSBytes      int64   `json:"rss_bytes"`
	UptimeSeconds float64 `json:"uptime_seconds"`
}

// CodeCacheStatus is the compiler's code cache file and what was done
// with it since the gateway started.
type CodeCacheStatus struct {
	// Path is the file ("" without server.cache_dir: no cache kept);
	// SizeBytes its size, 0 while there is none.
	Path      string `json:"path,omitempty"`
	SizeBytes int64  `json:"size_bytes"`
	// Hits counts loads of the compiler from the file; Misses loads with
	// no file there; Rejected files V8 refused (another V8 or flags);
	// Invalid files not given to V8 (damaged, or not private); Written
	// caches stored.
	Hits     int64 `json:"hits"`
	Misses   int64 `json:"misses"`
	Rejected int64 `json:"rejected"`
	Invalid  int64 `json:"invalid"`
	Written  int64 `json:"written"`
}

// Status reports the code cache file for operators.
func (f *CodeCacheFile) Status() CodeCacheStatus {
	st := f.Stats()
	out := CodeCacheStatus{Path: f.Path(), Hits: st.Loaded, Misses: st.Missed, Rejected: st.Rejected, Invalid: st.Invalid, Written: st.Stored}
	if out.Path != "" {
		if fi, err := os.Stat(out.Path); err == nil {
			out.SizeBytes = fi.Size()
		}
	}
	return out
}

// The outcomes of a check as code mode's runs see them ([Tally]).
const (
	// OutcomeOK: the checker answered and the program went on (with its
	// diagnostics attached, in warn mode).
	OutcomeOK = "ok"
	// OutcomeRefused: the checker answered and strict mode refused the
	// program (TYPECHECK_FAILED).
	OutcomeRefused = "refused"
	// OutcomeFailed: the checker could not answer (not loaded within the
	// run's deadline, its worker died, the principal's queue full, its
	// memory exceeded): strict refused the program (TYPECHECK_UNAVAILABLE,
	// TYPECHECK_TOO_COMPLEX), warn ran it with a notice.
	OutcomeFailed = "failed"
	// OutcomeTimeout: the check passed sandbox.typecheck_timeout and was
	// ended inside the checker: strict refused the program
	// (TYPECHECK_TIMEOUT), warn ran it with a notice.
	OutcomeTimeout = "timeout"
	// OutcomeSkipped: the checker was not ready and the program ran
	// without waiting for it; no longer happens (issue 42: runs wait for
	// the checker), kept so that the metric's series stay.
	OutcomeSkipped = "skipped"
	// OutcomeCancelled: the run's client went away during the check.
	OutcomeCancelled = "cancelled"
)

// Outcomes lists every check outcome, for the metrics.
var Outcomes = []string{OutcomeOK, OutcomeRefused, OutcomeFailed, OutcomeTimeout, OutcomeSkipped, OutcomeCancelled}

// Checks counts code mode's checks by outcome since the gateway started.
type Checks struct {
	OK      int64 `json:"ok"`
	Refused int64 `json:"refused"`
	Failed  int64 `json:"failed"`
	Timeout int64 `json:"timeout"`
	Skipped int64 `json:"skipped"`
	// Cancelled counts checks whose run's client went away meanwhile.
	Cancelled int64 `json:"cancelled"`
	// MeanMS is the mean duration of the checks the checker answered
	// (ok and refused), in milliseconds.
	MeanMS float64 `json:"mean_ms"`
	// LastError is why the last check that failed or timed out did.
	LastError string `json:"last_error,omitempty"`
}

// Tally counts checks by outcome. The zero value is ready; safe for
// concurrent use.
type Tally struct {
	mu       sync.Mutex
	checks   Checks
	answered time.Duration
}

// Record counts one check: its outcome (an Outcome* value), how long it
// took and, for a check that failed or timed out, why.
func (t *Tally) Record(outcome string, took time.Duration, err error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	switch outcome {
	case OutcomeOK:
		t.checks.OK++
	case OutcomeRefused:
		t.checks.Refused++
	case OutcomeFailed:
		t.checks.Failed++
	case OutcomeTimeout:
		t.checks.Timeout++
	case OutcomeSkipped:
		t.checks.Skipped++
	case OutcomeCancelled:
		t.checks.Cancelled++
	}
	if outcome == OutcomeOK || outcome == OutcomeRefused {
		t.answered += took
	}
	if err != nil {
		t.checks.LastError = err.Error()
	}
}

// Checks copies the counts.
func (t *Tally) Checks() Checks {
	t.mu.Lock()
	defer t.mu.Unlock()
	c := t.checks
	if n := c.OK + c.Refused; n > 0 {
		c.MeanMS = float64(t.answered.Microseconds()) / 1000 / float64(n)
	}
	return c
}
