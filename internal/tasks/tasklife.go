package tasks

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/isogate/isogate/internal/codemode"
	"github.com/isogate/isogate/internal/resultstore"
)

// True outcomes after a takeover (issue 44). A durable task's journal is
// in the store from the task's start (its program, before any call) until
// its outcome is kept, and is never dropped while the task runs: a run that
// stops being durable (sandbox.durable_max_calls, a journal write the store
// refused) appends a last entry saying so instead. So the store never holds
// "calls made, no journal, no outcome": a replica taking the task over
// runs it from its journal (no call yet: from the start), or fails it with
// CALL_INDETERMINATE naming the calls whose outcome is unknown (those made
// after the journal stopped), never with REPLICA_LOST while a journal says
// that a call was made.

// TaskStep is a step of a task's life on the replica running it, at which
// a test hook (SetTaskHook) may stop the replica.
type TaskStep string

// The steps of a task's life a TaskHook sees.
const (
	// StepCreated: the task is created and leased (its journal begun, when
	// durable); its call has not started.
	StepCreated TaskStep = "created"
	// StepJournalWrite: a write of the task's journal is about to be sent
	// (its begin, a call started or done: the n-th write of the task is
	// its n-th StepJournalWrite).
	StepJournalWrite TaskStep = "journal-write"
	// StepRunEnded: the task's call ended; its outcome is not kept yet.
	StepRunEnded TaskStep = "run-ended"
	// StepOutcomeKept: the task's outcome is kept; its lease and journal
	// are not dropped yet.
	StepOutcomeKept TaskStep = "outcome-kept"
)

// TaskAct is what a TaskHook makes of a step.
type TaskAct int

// The acts of a TaskHook.
const (
	// TaskGoOn: the task goes on.
	TaskGoOn TaskAct = iota
	// TaskKill: the replica stops serving the task here, as if killed:
	// it writes nothing more for it (no journal entry, outcome, lease
	// renewal or release); its lease lapses for another replica to take.
	TaskKill
	// TaskFailWrite (StepJournalWrite only): the store refuses the
	// journal write (as after a pause past a store timeout).
	TaskFailWrite
)

// TaskHook is called at each step of the life of a task this replica
// runs (tests only).
type TaskHook func(step TaskStep, task string) TaskAct

// taskHooks holds the hook of a surface's tasks.
type taskHooks struct{ hook atomic.Pointer[TaskHook] }

// SetTaskHook makes h see each step of the tasks this replica runs: a
// test stops the replica at a chosen step (nil: no hook).
func (g *Tasks) SetTaskHook(h TaskHook) {
	if h == nil {
		g.hooks.hook.Store(nil)
		return
	}
	g.hooks.hook.Store(&h)
}

// at is what the hook makes of step of task id (TaskGoOn without one).
func (g *Tasks) at(step TaskStep, id string) TaskAct {
	if h := g.hooks.hook.Load(); h != nil {
		return (*h)(step, id)
	}
	return TaskGoOn
}

// killedAt reports whether the hook kills the replica at step of task id;
// if so it stops the task's run (lost) as a taken-over one: nothing more
// is kept of it here.
func (g *Tasks) killedAt(step TaskStep, id string, lost context.CancelCauseFunc) bool {
	if g.at(step, id) != TaskKill {
		return false
	}
	lost(errLeaseLost)
	return true
}

// errWriteRefused is the store failure a TaskHook injects (TaskFailWrite).
var errWriteRefused = errors.New("journal write refused (test hook)")

// writeTaskJournal appends entries to task id's journal for owner.
func (g *Tasks) writeTaskJournal(ctx context.Context, d *Durable, owner string, entries [][]byte, deadline time.Time) error {
	switch g.at(StepJournalWrite, d.ID) {
	case TaskKill:
		return fmt.Errorf("the replica stopped (test hook): %w", resultstore.ErrFenced)
	case TaskFailWrite:
		return errWriteRefused
	}
	return g.host.Durables.Append(ctx, d, owner, "", entries, deadline)
}

// beginJournal writes the begin of a durable task's journal (its program,
// no call yet) before its run starts, so that a replica taking the task
// over before its first call runs it from the start rather than failing
// it for want of a journal. Not written (the store failed), it goes with
// the first call's entries.
func (g *Tasks) beginJournal(d *Durable, owner string, deadline time.Time) {
	ctx, cancel := context.WithTimeout(context.Background(), SendTimeout)
	defer cancel()
	_ = d.Run.Flush(ctx, func(ctx context.Context, entries [][]byte) error {
		return g.writeTaskJournal(ctx, d, owner, entries, deadline)
	})
}

// undurableKind is the kind of the last entry of a task's journal whose
// run went on without it (codemode's kinds are other words).
const undurableKind = "undurable"

// undurableRecord is that entry: why the run stopped being durable.
type undurableRecord struct {
	K   string `json:"k"` // undurableKind
	Why string `json:"why"`
}

// markUndurable appends to a task's journal that its run goes on without
// it (why): the journal stays, saying which calls were made, and a replica
// taking the task over fails it with CALL_INDETERMINATE instead of
// replaying a journal that no longer says what the run did.
func (g *Tasks) markUndurable(ctx context.Context, d *Durable, owner, why string, deadline time.Time) error {
	rec, _ := json.Marshal(undurableRecord{K: undurableKind, Why: why})
	return g.writeTaskJournal(ctx, d, owner, [][]byte{rec}, deadline)
}

// undurableJournal is a taken-over task's journal that ends with an
// undurable entry.
type undurableJournal struct {
	j   *codemode.Journal
	why string
}

func (e *undurableJournal) Error() string {
	return "its run went on without a journal (" + e.why + ")"
}

// cutUndurable splits an undurable entry off a journal's entries: the
// entries before it and why the run went on without the journal ("": it
// did not).
func cutUndurable(entries [][]byte) ([][]byte, string) {
	for i, e := range entries {
		var u undurableRecord
		if json.Unmarshal(e, &u) == nil && u.K == undurableKind {
			return entries[:i], cmpStr(u.Why, "unknown")
		}
	}
	return entries, ""
}

func cmpStr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// indeterminate is the result of a taken-over task whose journal stopped
// while its run went on: the calls it journalled were made, those after
// may or may not have been; none is made again.
func indeterminate(tool string, u *undurableJournal) *mcp.CallToolResult {
	var made []string
	for _, c := range u.j.Calls {
		made = append(made, fmt.Sprintf("#%d %s.%s", c.Seq, c.Backend, c.Tool))
	}
	done := "no call"
	if len(made) > 0 {
		done = "calls " + strings.Join(made, ", ")
	}
	res := textResult(fmt.Sprintf("%s: the replica running this task (%s) stopped before it ended. Its journal holds %s; "+
		"after that %s, so the calls it made after those may or may not have happened. None is made again; check before running it again.",
		string(codemode.CodeCallIndeterminate), tool, done, u.Error()), true)
	res.Meta = mcp.Meta{"isogate/code": string(codemode.CodeCallIndeterminate)}
	return res
}

// Every task ends (issue 44, 3). A task's replica ends its run by the
// run's deadline (its timeout; a task of the 2026-07-28 wire may wait a
// minute more for its client's input, as a parked run does). A task whose
// replica stopped is taken over through its lease (leases.go); a task
// still not over a lease (store.lease_ttl) past its deadline, with no
// lease left and not running on the replica that sees it, lost its
// replica in a way no lease tells (its lease never written, or lost):
// whichever replica sees it (tasks/get, tasks/list, tasks/result) ends it,
// failed with TASK_EXPIRED; the write is refused if it ended meanwhile.

// codeTaskExpired is the isogate/code of a task ended past its deadline.
const codeTaskExpired = "TASK_EXPIRED"

// deadline is when the run of a task of call, created at now, surely
// ended on its replica; zero for a call whose run has no deadline of
// isogate's (a passthrough call: its task's TTL bounds it).
func (g *Tasks) deadline(now time.Time, in *taskIntent, call *mcp.CallToolRequest) time.Time {
	if call.Params.Name != "call_tool_chain" {
		return time.Time{}
	}
	j := g.host.ChainJournal(call.Params.Arguments)
	if j == nil { // not a program: its run fails at once, within the default timeout
		j = &codemode.Journal{}
	}
	d := now.Add(g.host.RunTimeout(j))
	if in.modern {
		d = d.Add(time.Minute)
	}
	return d
}

// expire ends task t, seen working past its deadline and a lease and not
// running here, with TASK_EXPIRED, and returns it as it is now.
func (g *Tasks) expire(ctx context.Context, t *resultstore.Task) *resultstore.Task {
	if t.Terminal() || t.Deadline.IsZero() || time.Now().Before(t.Deadline.Add(g.opts.LeaseTTL)) {
		return t
	}
	if _, here := g.running.Load(t.ID); here {
		return t // its run ends here (its context's deadline)
	}
	if c, ok := g.opts.Leases.(resultstore.LeaseChecker); ok {
		// A lease held: its replica runs it (a taken-over run starts its
		// timeout again); lapsed: the next scan takes it over. Unknown
		// (the store failed): not ended (the next look decides).
		if leased, err := c.Leased(ctx, t.ID); err != nil || leased {
			return t
		}
	}
	g.host.Logger.Warn("task past its deadline and not running: ended", slog.String("task", t.ID), slog.String("code", codeTaskExpired))
	rt := &runningTask{gt: g, task: *t}
	res := textResult(fmt.Sprintf("%s: the task was still %s %s after its deadline, and no replica runs it any more (its replica stopped); "+
		"what it did before is unknown; check before running it again.", codeTaskExpired, t.Status, g.opts.LeaseTTL), true)
	res.Meta = mcp.Meta{"isogate/code": codeTaskExpired}
	rt.finish(res, nil, nil)
	if now, err := g.store.Get(ctx, t.Owner, t.ID); err == nil {
		return now
	}
	return t
}

// textResult is a tool result of one text.
func textResult(text string, isError bool) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}, IsError: isError}
}
