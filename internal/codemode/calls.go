package codemode

import (
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/isogate/isogate/v8sandbox"
)

// callTracker records a run's backend calls: what is in flight (to name it
// when the run times out), what was called (for the run's log line) and
// which backends failed with which error code (for hints).
type callTracker struct {
	mu       sync.Mutex
	inflight map[string]int
	waiting  map[string]int // backends a call waits for (still starting)
	called   []string       // distinct tools, in first-call order
	total    int
	received int // bytes of the results the calls received from backends
	failures []backendFailure
	// cut counts the calls the run's end cut short (they were in flight
	// when it ended), by tool: the sandbox may end them before it reports
	// its timeout.
	cut map[string]int
	// invalid is the tool and the arguments of the run's first call
	// refused for its arguments (INVALID_ARGUMENTS), whose call sites the
	// run's error names.
	invalid     *Tool
	invalidArgs json.RawMessage
}

// refusedArguments records a call of t refused for its arguments args.
func (c *callTracker) refusedArguments(t *Tool, args json.RawMessage) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.invalid == nil {
		c.invalid, c.invalidArgs = t, args
	}
}

// invalidCall is the tool and arguments of the run's first call refused
// for its arguments; t is nil when there was none.
func (c *callTracker) invalidCall() (t *Tool, args json.RawMessage) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.invalid, c.invalidArgs
}

// backendFailure is a failed call of the run to a backend, classified by
// its error's code.
type backendFailure struct {
	backend string
	code    v8sandbox.Code
}

// maxLoggedTools bounds the tool names in a run's log line.
const maxLoggedTools = 10

func (c *callTracker) start(tool string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.inflight == nil {
		c.inflight = map[string]int{}
	}
	c.inflight[tool]++
	c.total++
	if !slices.Contains(c.called, tool) && len(c.called) <= maxLoggedTools {
		c.called = append(c.called, tool)
	}
}

// done ends a call of tool that received a result of n bytes.
func (c *callTracker) done(tool string, n int, err error) {
	c.mu.Lock()
	if c.inflight[tool]--; c.inflight[tool] <= 0 {
		delete(c.inflight, tool)
	}
	c.received += n
	c.mu.Unlock()
	if err != nil {
		b, _, _ := strings.Cut(tool, ".")
		c.failed(b, err)
	}
}

// failed records a call's error that has a code (hints act on the
// backend's codes).
func (c *callTracker) failed(b string, err error) {
	code := v8sandbox.CodeOf(err)
	if code == "" {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, f := range c.failures {
		if f.backend == b && f.code == code {
			return
		}
	}
	c.failures = append(c.failures, backendFailure{backend: b, code: code})
}

// waitStart records that the run waits for a backend that is starting.
func (c *callTracker) waitStart(backend string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.waiting == nil {
		c.waiting = map[string]int{}
	}
	c.waiting[backend]++
}

// waitDone ends a wait recorded by waitStart.
func (c *callTracker) waitDone(backend string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.waiting[backend]--; c.waiting[backend] <= 0 {
		delete(c.waiting, backend)
	}
}

// cutShort records a call of tool the run's end cut short.
func (c *callTracker) cutShort(tool string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cut == nil {
		c.cut = map[string]int{}
	}
	c.cut[tool]++
}

// inFlight names the calls still running or cut short by the run's end,
// and the backends waited for, sorted.
func (c *callTracker) inFlight() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	names := make([]string, 0, len(c.inflight)+len(c.cut)+len(c.waiting))
	for n := range c.inflight {
		names = append(names, n)
	}
	for n := range c.cut {
		if c.inflight[n] == 0 {
			names = append(names, n)
		}
	}
	for b := range c.waiting {
		names = append(names, "backend "+strconv.Quote(b)+" to start")
	}
	slices.Sort(names)
	return strings.Join(names, ", ")
}

// receivedBytes is the size of every result the run's calls received.
func (c *callTracker) receivedBytes() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.received
}

func (c *callTracker) count() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.total
}

// first is the first tool the run called ("backend.tool", original
// names), or "".
func (c *callTracker) first() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.called) == 0 {
		return ""
	}
	return c.called[0]
}

// names lists the tools called, for the log.
func (c *callTracker) names() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := strings.Join(c.called[:min(len(c.called), maxLoggedTools)], ",")
	if len(c.called) > maxLoggedTools {
		s += ",…"
	}
	return s
}

func (c *callTracker) backendFailures() []backendFailure {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.failures)
}
