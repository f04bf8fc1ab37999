package codemode

import (
	"slices"
	"strings"
	"sync"

	"github.com/isogate/isogate/gateway/backend"
)

// callTracker records a run's backend calls: what is in flight (to name it
// when the run times out), what was called (for the run's log line) and
// which backends failed with which error code (for hints).
type callTracker struct {
	mu       sync.Mutex
	inflight map[string]int
	called   []string // distinct tools, in first-call order
	total    int
	failures []backendFailure
}

// backendFailure is a backend error of the run, classified by code.
type backendFailure struct {
	backend string
	code    backend.Code
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

func (c *callTracker) done(tool string, err error) {
	c.mu.Lock()
	if c.inflight[tool]--; c.inflight[tool] <= 0 {
		delete(c.inflight, tool)
	}
	c.mu.Unlock()
	if err != nil {
		b, _, _ := strings.Cut(tool, ".")
		c.failed(b, err)
	}
}

// failed records a backend error that has a backend code.
func (c *callTracker) failed(b string, err error) {
	code := backend.CodeOf(err)
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

// inFlight names the calls still running, sorted.
func (c *callTracker) inFlight() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	names := make([]string, 0, len(c.inflight))
	for n := range c.inflight {
		names = append(names, n)
	}
	slices.Sort(names)
	return strings.Join(names, ", ")
}

func (c *callTracker) count() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.total
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
