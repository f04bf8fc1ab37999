package codemode

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// settledReport is what the bridge reports when a program ends with tool
// calls it did not await (see finish in bridge.js): how each of them ended,
// those still running when the grace period ran out, and the properties
// the program read from tool call promises ("missing await?").
type settledReport struct {
	// Settled holds [tool, ok, error] per un-awaited call that ended.
	Settled [][]json.RawMessage `json:"settled"`
	// Pending names the un-awaited calls still running at the end.
	Pending []string `json:"pending"`
	// Reads holds [tool, property] per read of a missing property of a
	// tool call's promise.
	Reads [][2]string `json:"reads"`
}

// settledHandler keeps the bridge's report of un-awaited calls.
func (h *bridgeHost) settledHandler(_ context.Context, args json.RawMessage) (json.RawMessage, error) {
	var a []settledReport
	if err := json.Unmarshal(args, &a); err != nil || len(a) != 1 {
		return nil, fmt.Errorf("bad settled report")
	}
	h.settledMu.Lock()
	defer h.settledMu.Unlock()
	if h.settled == nil { // the first report is the bridge's; a program cannot call it again
		h.settled = &a[0]
	}
	return nil, nil
}

// report returns the bridge's report of un-awaited calls, or nil.
func (h *bridgeHost) report() *settledReport {
	h.settledMu.Lock()
	defer h.settledMu.Unlock()
	return h.settled
}

// graceHandler resolves shortly before the run's deadline: how long a
// program's value waits for the calls it did not await.
func (h *bridgeHost) graceHandler(ctx context.Context, _ json.RawMessage) (json.RawMessage, error) {
	t := time.NewTimer(time.Until(h.deadline.Add(-h.grace)))
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
	return nil, nil
}

// unawaitedGrace is how long before its deadline a run stops waiting for
// the calls its program did not await, so that it still returns its value
// even on a loaded machine: a fifth of the run's timeout, between 50 ms
// and two seconds.
func unawaitedGrace(timeout time.Duration) time.Duration {
	return min(max(timeout/5, 50*time.Millisecond), 2*time.Second)
}

// unawaitedCall is one tool's un-awaited calls, for the notice.
type unawaitedCall struct {
	tool         string
	completed    int
	failed       int
	firstError   string
	stillRunning int
}

// count is the number of un-awaited calls in the report.
func (r *settledReport) count() int {
	if r == nil {
		return 0
	}
	return len(r.Settled) + len(r.Pending)
}

// notices renders the report for the agent: one line per tool whose calls
// were not awaited, and a "missing await?" line per promise property read,
// whose example calls the tool by the names a program uses (v.callName).
func (r *settledReport) notices(v *view) []string {
	if r == nil {
		return nil
	}
	byTool := map[string]*unawaitedCall{}
	var order []string
	get := func(tool string) *unawaitedCall {
		c := byTool[tool]
		if c == nil {
			c = &unawaitedCall{tool: tool}
			byTool[tool] = c
			order = append(order, tool)
		}
		return c
	}
	for _, s := range r.Settled {
		if len(s) != 3 {
			continue
		}
		var tool, errText string
		var ok bool
		if json.Unmarshal(s[0], &tool) != nil || json.Unmarshal(s[1], &ok) != nil {
			continue
		}
		_ = json.Unmarshal(s[2], &errText)
		c := get(tool)
		if ok {
			c.completed++
		} else {
			if c.failed == 0 {
				c.firstError = errText
			}
			c.failed++
		}
	}
	for _, tool := range r.Pending {
		get(tool).stillRunning++
	}
	var out []string
	for _, tool := range order {
		out = append(out, byTool[tool].notice())
	}
	if len(out) > 0 {
		out = append(out, "Await tool calls (`await backend.tool({...})`, or `await Promise.all([...])` for several at once) to use their results and see their errors.")
	}
	seen := map[[2]string]bool{}
	for _, rd := range r.Reads {
		if seen[rd] {
			continue
		}
		seen[rd] = true
		tool, prop := rd[0], rd[1]
		if tool == "" {
			tool = "a tool call"
		} else {
			tool = v.callName(tool)
		}
		out = append(out, fmt.Sprintf("missing await? The program read `.%s` from the Promise that %s returned, which is undefined: "+
			"await the call first, e.g. `(await %s({...})).%s`.", prop, tool, tool, prop))
	}
	return out
}

// notice describes one tool's un-awaited calls, e.g. "2 calls to
// memory.create_entities were not awaited; they completed".
func (c *unawaitedCall) notice() string {
	n := c.completed + c.failed + c.stillRunning
	var b strings.Builder
	if n == 1 {
		fmt.Fprintf(&b, "1 call to %s was not awaited; ", c.tool)
	} else {
		fmt.Fprintf(&b, "%d calls to %s were not awaited; ", n, c.tool)
	}
	var parts []string
	switch {
	case c.completed == n:
		parts = append(parts, pronoun(n)+" completed")
	case c.completed > 0:
		parts = append(parts, fmt.Sprintf("%d completed", c.completed))
	}
	if c.failed > 0 {
		head := fmt.Sprintf("%d failed", c.failed)
		if c.failed == n {
			head = pronoun(n) + " failed"
		}
		if c.firstError != "" {
			head += " (" + c.firstError + ")"
		}
		parts = append(parts, head)
	}
	if c.stillRunning > 0 {
		head := fmt.Sprintf("%d had not finished near the run's deadline and were cancelled", c.stillRunning)
		switch {
		case n == 1:
			head = "it had not finished near the run's deadline and was cancelled"
		case c.stillRunning == n:
			head = "they had not finished near the run's deadline and were cancelled"
		}
		parts = append(parts, head)
	}
	b.WriteString(strings.Join(parts, ", "))
	return b.String()
}

func pronoun(n int) string {
	if n == 1 {
		return "it"
	}
	return "they"
}
