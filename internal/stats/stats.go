// Package stats counts what the gateway does: tool calls per tool, code-mode
// runs per tier, and bytes returned to the agent versus bytes the runs'
// tool calls received from backends (what stayed out of the context).
package stats

import (
	"math"
	"sort"
	"sync"
	"time"
)

// Counters is a concurrency-safe set of gateway counters. The zero value is
// ready to use.
type Counters struct {
	mu        sync.Mutex
	started   time.Time
	tools     map[string]*ToolStats
	tiers     map[string]int64
	processed int64
	returned  int64
	received  int64
	errors    int64
}

// ToolStats are the counters of one backend tool.
type ToolStats struct {
	Name      string `json:"name"`
	Calls     int64  `json:"calls"`
	Errors    int64  `json:"errors"`
	BytesOut  int64  `json:"bytes"`
	TotalMS   int64  `json:"total_ms"`
	LastError string `json:"last_error,omitempty"`
}

// Snapshot is a point-in-time copy of the counters, shaped for
// the isogate://stats resource.
type Snapshot struct {
	Since          time.Time        `json:"since"`
	ToolCalls      int64            `json:"tool_calls"`
	Runs           map[string]int64 `json:"runs_by_tier"`
	RunErrors      int64            `json:"run_errors"`
	BytesProcessed int64            `json:"bytes_processed"`
	BytesReturned  int64            `json:"bytes_returned"`
	// BytesReceived is what code-mode runs' tool calls received from
	// backends: what an agent calling the tools directly would have read.
	BytesReceived int64 `json:"bytes_received"`
	// BytesKeptOut is BytesReceived minus BytesReturned, at least 0: the
	// bytes code mode kept out of the agent's context.
	BytesKeptOut int64 `json:"bytes_kept_out"`
	// ReductionPct is BytesKeptOut as a percentage of BytesReceived (0
	// while no run has received anything).
	ReductionPct float64     `json:"reduction_pct"`
	Tools        []ToolStats `json:"tools"`
}

// New returns counters that start now.
func New() *Counters { return &Counters{started: time.Now()} }

func (c *Counters) init() {
	if c.tools == nil {
		c.tools = map[string]*ToolStats{}
		c.tiers = map[string]int64{}
		if c.started.IsZero() {
			c.started = time.Now()
		}
	}
}

// ToolCall records one backend tool call: its result size and error, if any.
func (c *Counters) ToolCall(name string, bytes int, took time.Duration, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.init()
	t := c.tools[name]
	if t == nil {
		t = &ToolStats{Name: name}
		c.tools[name] = t
	}
	t.Calls++
	t.BytesOut += int64(bytes)
	t.TotalMS += took.Milliseconds()
	if err != nil {
		t.Errors++
		t.LastError = err.Error()
	}
}

// Run records one code-mode run: its tier, the bytes it produced before
// shaping (processed), the bytes returned to the agent and the bytes its
// tool calls received from backends.
func (c *Counters) Run(tier string, processed, returned, received int, failed bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.init()
	c.tiers[tier]++
	c.processed += int64(processed)
	c.returned += int64(returned)
	c.received += int64(received)
	if failed {
		c.errors++
	}
}

// Snapshot copies the counters.
func (c *Counters) Snapshot() Snapshot {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.init()
	s := Snapshot{Since: c.started, Runs: map[string]int64{}, RunErrors: c.errors,
		BytesProcessed: c.processed, BytesReturned: c.returned}
	for k, v := range c.tiers {
		s.Runs[k] = v
	}
	for _, t := range c.tools {
		s.ToolCalls += t.Calls
		s.Tools = append(s.Tools, *t)
	}
	sort.Slice(s.Tools, func(i, j int) bool { return s.Tools[i].Name < s.Tools[j].Name })
	s.BytesReceived = c.received
	s.BytesKeptOut = max(c.received-c.returned, 0)
	if c.received > 0 {
		s.ReductionPct = math.Round(float64(s.BytesKeptOut)*1000/float64(c.received)) / 10
	}
	return s
}
