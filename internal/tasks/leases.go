package tasks

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/isogate/isogate/internal/authn"
	"github.com/isogate/isogate/internal/codemode"
	"github.com/isogate/isogate/internal/pipeline"
	"github.com/isogate/isogate/internal/resultstore"
	"github.com/isogate/isogate/v8sandbox"
)

// Tasks that outlive their replica (issue 35). With the task state in
// Redis, a replica holds every task it runs under a lease (resultstore
// Leases) that it renews every third of store.lease_ttl. Every replica
// serving HTTP scans, every third of store.lease_ttl, for leases that
// lapsed (at most leaseScanBatch per scan: bounded work), and takes each
// over atomically (one taker):
//   - a call_tool_chain task journalled with sandbox.durable: all is
//     continued on the taker by replay: the journalled calls are answered
//     from the journal (none is made again), a call that was started and
//     has no result fails the run with CALL_INDETERMINATE unless its tool
//     declares idempotentHint, and the program continues live;
//   - one whose journal says its run went on without it fails with
//     CALL_INDETERMINATE naming the journalled calls (tasklife.go);
//   - any other task (durability off, a passthrough call, a journal that
//     is gone) is failed with REPLICA_LOST: never "working" until its TTL.
// A replica whose lease was taken (it was alive but could not renew in
// time) stops its run and writes nothing more: the journal's holder fence
// refuses its writes, and its outcome is not kept.

// codeReplicaLost is the isogate/code of a task whose replica stopped
// while it ran and which could not be continued elsewhere.
const codeReplicaLost = "REPLICA_LOST"

// codeJournalUnavailable is the code of a durable task stopped because
// its journal could neither be written nor dropped.
const codeJournalUnavailable = "JOURNAL_UNAVAILABLE"

// codedCause is why a task's run was stopped, with the code the run then
// ends with: code mode reports a coded cause of its context's end as the
// run's code and message, instead of CANCELLED.
type codedCause struct {
	code v8sandbox.Code
	err  error
}

func (e *codedCause) Error() string { return e.err.Error() }

func (e *codedCause) Unwrap() error { return e.err }

// ErrorCode implements [v8sandbox.Coded].
func (e *codedCause) ErrorCode() v8sandbox.Code { return e.code }

func cmpErr(a, b error) error {
	if a != nil {
		return a
	}
	return b
}

// leaseScanBatch bounds the lapsed leases one scan takes over.
const leaseScanBatch = 16

// errLeaseLost is the cause of a task's context when another replica took
// its lease over.
var errLeaseLost = errors.New("another replica took the task over (its lease lapsed)")

// leaseRecord is what a task's lease tells the replica that takes it over.
type leaseRecord struct {
	Task  string `json:"task"`
	Owner string `json:"owner"`
	Tool  string `json:"tool"`
	// Journal is the task's durable run in the journal store ("": none).
	Journal   string          `json:"journal,omitempty"`
	Principal *leasePrincipal `json:"principal,omitempty"`
}

// leasePrincipal is the caller a taken-over run acts for: its name, groups
// and scopes (policy and audit), never its credential.
type leasePrincipal struct {
	Name   string   `json:"name"`
	Groups []string `json:"groups,omitempty"`
	Scopes []string `json:"scopes,omitempty"`
}

// taskLease is this replica's hold on a task.
type taskLease struct {
	g      *Tasks
	id     string
	holder string

	mu sync.Mutex
	// confirmed is when the last Hold, Take or Renew that succeeded was
	// sent (this replica's monotonic clock): the lease lasts at least
	// store.lease_ttl from then, so nobody can have taken it before.
	confirmed time.Time
	lost      bool // a renewal was refused: another replica took it
}

// errLeaseUnconfirmed is the cause of a fence refusing an action of a
// task whose lease could not be confirmed (the store did not answer).
var errLeaseUnconfirmed = errors.New("this replica could not confirm it still holds the task's lease")

// renew extends the lease and keeps when it was confirmed.
func (l *taskLease) renew(ctx context.Context) error {
	sent := time.Now()
	err := l.g.opts.Leases.Renew(ctx, l.id, l.holder, l.g.opts.LeaseTTL)
	l.mu.Lock()
	defer l.mu.Unlock()
	switch {
	case err == nil:
		if sent.After(l.confirmed) {
			l.confirmed = sent
		}
	case errors.Is(err, resultstore.ErrLeaseLost):
		l.lost = true
	}
	return err
}

// fence reports whether this replica may still act for the task (send a
// call, keep its outcome): nil while its lease is surely held (confirmed
// less than half of store.lease_ttl ago, as the heartbeat keeps it);
// past that, after a pause (a frozen process, a stalled machine) it is
// confirmed with the store first. errLeaseLost: another replica took it;
// errLeaseUnconfirmed: the store did not answer (fail closed).
func (l *taskLease) fence(ctx context.Context) error {
	if l == nil {
		return nil
	}
	l.mu.Lock()
	lost, confirmed := l.lost, l.confirmed
	l.mu.Unlock()
	if lost {
		return errLeaseLost
	}
	if time.Since(confirmed) < l.g.opts.LeaseTTL/2 {
		return nil
	}
	l.g.host.Logger.Debug("task lease not confirmed lately: confirming it before acting", slog.String("task", l.id))
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), SendTimeout)
	defer cancel()
	err := l.renew(ctx)
	switch {
	case errors.Is(err, resultstore.ErrLeaseLost):
		l.g.host.Logger.Warn("task taken over by another replica: stopped here (fenced)", slog.String("task", l.id))
		return errLeaseLost
	case err != nil:
		return fmt.Errorf("%w: %w", errLeaseUnconfirmed, err)
	}
	return nil
}

// held reports, without asking the store, whether the task's lease is
// surely held (see fence); true when the task is not leased.
func (l *taskLease) held() bool {
	if l == nil {
		return true
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return !l.lost && time.Since(l.confirmed) < l.g.opts.LeaseTTL/2
}

// withFence returns ctx, a leased task's run context, whose backend calls
// pass l's fence (pipeline.FenceStage); a lost lease also stops the run.
func (l *taskLease) withFence(ctx context.Context, lost context.CancelCauseFunc) context.Context {
	if l == nil {
		return ctx
	}
	return pipeline.WithFence(ctx, func(ctx context.Context) error {
		err := l.fence(ctx)
		if errors.Is(err, errLeaseLost) {
			lost(errLeaseLost)
		}
		return err
	})
}

// outcomeCause is the cause with which a leased task's run is finished:
// its context's, or errLeaseLost when the fence refuses to keep an
// outcome for a task this replica no longer surely holds.
func (l *taskLease) outcomeCause(ctx context.Context, cause error) error {
	if cause != nil || l == nil {
		return cause
	}
	if err := l.fence(ctx); err != nil {
		l.g.host.Logger.Info("task's outcome not kept here: its lease is not surely held", slog.String("task", l.id), slog.Any("why", err))
		return errLeaseLost
	}
	return nil
}

// leasing reports whether tasks are held under leases.
func (g *Tasks) leasing() bool { return g.opts.Leases != nil && g.opts.LeaseTTL > 0 }

// journalled reports whether a task of call is a durable run: a
// call_tool_chain task when runs are journalled through (sandbox.durable:
// all) and tasks are leased.
func (g *Tasks) journalled(call *mcp.CallToolRequest) bool {
	return g.leasing() && call.Params.Name == "call_tool_chain" && g.host.Durables.Store != nil && g.host.Durables.Durability == codemode.DurableAll
}

// durableTask returns the durable run of a journalled call_tool_chain task
// (its journal is under the task's id), nil when its arguments are not a
// program; lost stops the run when another replica took its journal.
func (g *Tasks) durableTask(call *mcp.CallToolRequest, t *resultstore.Task, lost context.CancelCauseFunc) *Durable {
	j := g.host.ChainJournal(call.Params.Arguments)
	if j == nil {
		return nil
	}
	deadline := time.Now().Add(g.host.RunTimeout(j))
	d := g.taskDurable(t.Owner, j, t.ID, deadline, NewHolder(), resultstore.JournalCursor{}, lost)
	g.beginJournal(d, t.Owner, deadline)
	return d
}

// taskDurable is the durable run of a task's journal j under id, held by
// holder and written through: a write fenced off (another replica took the
// task over) stops the run at once, before it sends anything more.
func (g *Tasks) taskDurable(owner string, j *codemode.Journal, id string, deadline time.Time, holder string,
	at resultstore.JournalCursor, lost context.CancelCauseFunc) *Durable {
	d := NewDurable(id, holder, true, at)
	log := g.host.Logger.With(slog.String("task", id))
	sink := func(ctx context.Context, entries [][]byte) error {
		var err error
		if entries != nil {
			err = g.writeTaskJournal(ctx, d, owner, entries, deadline)
		}
		switch {
		case errors.Is(err, resultstore.ErrFenced):
			log.Warn("task's journal taken by another replica: stopped here")
			lost(errLeaseLost)
			return fmt.Errorf("%w: %w", codemode.ErrHalt, err)
		case entries == nil || err != nil:
			// The run goes on without a journal only once the store's says
			// so: a replica taking it over would replay a stale one and
			// make its later calls again. It stays, for the calls it holds
			// (tasklife.go).
			why := "sandbox.durable_max_calls or sandbox.durable_max_bytes reached"
			if err != nil {
				why = "a write of its journal failed: " + err.Error()
			}
			if merr := g.markUndurable(ctx, d, owner, why, deadline); merr != nil {
				log.Warn("task's journal neither written nor closed: stopped", slog.Any("error", merr))
				lost(&codedCause{code: codeJournalUnavailable, err: fmt.Errorf("%s: the task's journal could not be written to the store (%w); the run was stopped before its next call, so that no call is made twice", codeJournalUnavailable, cmpErr(err, merr))})
				return fmt.Errorf("%w: %w", codemode.ErrHalt, cmpErr(err, merr))
			}
			log.Info("task not durable any more: it fails with CALL_INDETERMINATE if its replica stops", slog.Any("error", err))
		}
		return err
	}
	d.Run = codemode.NewDurableRun(j, g.host.Durables.Limits, sink)
	return d
}

// hold puts task t under this replica's lease; nil when tasks are not
// leased or the lease table refused it (the task then only lives here).
func (g *Tasks) hold(ctx context.Context, t *resultstore.Task, tool string, journalled bool) *taskLease {
	if !g.leasing() {
		return nil
	}
	rec := leaseRecord{Task: t.ID, Owner: t.Owner, Tool: tool}
	if journalled {
		rec.Journal = t.ID
	}
	if p := authn.FromContext(ctx); p != nil {
		rec.Principal = &leasePrincipal{Name: p.Name, Groups: p.Groups, Scopes: p.Scopes}
	}
	data, _ := json.Marshal(rec)
	l := &taskLease{g: g, id: t.ID, holder: NewHolder(), confirmed: time.Now()}
	if err := g.opts.Leases.Hold(ctx, t.ID, l.holder, data, g.opts.LeaseTTL, time.Until(t.CreatedAt.Add(t.TTL))); err != nil {
		g.host.Logger.Warn("task not leased: it is lost if this replica stops", slog.String("task", t.ID), slog.Any("error", err))
		return nil
	}
	return l
}

// heartbeat renews l every third of store.lease_ttl until stop; when
// another replica took the task over it cancels the run (lost).
func (l *taskLease) heartbeat(ctx context.Context, lost context.CancelCauseFunc) (stop func()) {
	if l == nil {
		return func() {}
	}
	ctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	go func() {
		tick := time.NewTicker(l.g.opts.LeaseTTL / 3)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			err := l.renew(ctx)
			if errors.Is(err, resultstore.ErrLeaseLost) {
				l.g.host.Logger.Warn("task taken over by another replica: stopped here", slog.String("task", l.id))
				lost(errLeaseLost)
				return
			}
			if err != nil && ctx.Err() == nil {
				l.g.host.Logger.Warn("task lease not renewed", slog.String("task", l.id), slog.Any("error", err))
			}
		}
	}()
	return cancel
}

// release drops the lease (the task is over).
func (l *taskLease) release() {
	if l == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), SendTimeout)
	defer cancel()
	_ = l.g.opts.Leases.Release(ctx, l.id, l.holder)
}

// SweepLapsed takes over the tasks whose lease lapsed, every third of
// store.lease_ttl, until ctx ends.
func (g *Tasks) SweepLapsed(ctx context.Context) {
	if !g.leasing() {
		return
	}
	tick := time.NewTicker(g.opts.LeaseTTL / 3)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		ids, err := g.opts.Leases.Lapsed(ctx, leaseScanBatch)
		if err != nil {
			g.host.Logger.Debug("lapsed leases not scanned", slog.Any("error", err))
			continue
		}
		for _, id := range ids {
			g.takeOver(ctx, id)
		}
	}
}

// takeOver takes the lapsed lease of task id and continues the task by
// replay, or fails it with REPLICA_LOST.
func (g *Tasks) takeOver(ctx context.Context, id string) {
	l := &taskLease{g: g, id: id, holder: NewHolder(), confirmed: time.Now()}
	data, err := g.opts.Leases.Take(ctx, id, l.holder, g.opts.LeaseTTL)
	if err != nil {
		if !errors.Is(err, resultstore.ErrNotFound) {
			g.host.Logger.Warn("lapsed lease not taken over", slog.String("task", id), slog.Any("error", err))
		}
		return
	}
	log := g.host.Logger.With(slog.String("task", id))
	var rec leaseRecord
	if err := json.Unmarshal(data, &rec); err != nil || rec.Task != id {
		log.Warn("lapsed lease's record unreadable", slog.Any("error", err))
		l.release()
		return
	}
	t, err := g.store.Get(ctx, rec.Owner, rec.Task)
	switch {
	case errors.Is(err, resultstore.ErrNotFound) || err == nil && t.Terminal(): // expired, or it ended as its replica died
		l.release()
		return
	case err != nil: // the store failed: the lease lapses again and a next scan retries
		log.Warn("lapsed task not read", slog.Any("error", err))
		return
	}
	why := "the task was not journalled (sandbox.durable: all journals call_tool_chain tasks)"
	rt := &runningTask{gt: g, task: *t, lease: l}
	if rec.Journal != "" {
		j, at, err := g.takeJournal(ctx, rec, l.holder)
		var unavailable *storeUnavailable
		var undurable *undurableJournal
		switch {
		case errors.As(err, &undurable):
			log.Info("task taken over from a lost replica: its journal stopped, failed", slog.String("code", string(codemode.CodeCallIndeterminate)))
			rt.finish(indeterminate(rec.Tool, undurable), nil, l.outcomeCause(ctx, nil))
			g.releaseSettled(l, t)
			return
		case err == nil:
			log.Info("task taken over from a lost replica: resumed by replay", slog.Int("journalled_calls", len(j.Calls)))
			g.resume(t, rec, j, at, l)
			return
		case errors.As(err, &unavailable):
			log.Warn("lapsed task's journal not read", slog.Any("error", err))
			return
		}
		why = err.Error()
	}
	log.Info("task taken over from a lost replica: failed", slog.String("code", codeReplicaLost), slog.String("why", why))
	rt.finish(replicaLost(rec.Tool, why), nil, l.outcomeCause(ctx, nil))
	g.releaseSettled(l, t)
}

// endLeased ends this replica's hold on a task it ran: once its outcome is
// kept, the lease and the journal are dropped; if it could not be kept
// (the store failed), both stay: the lease lapses and another replica
// replays the journal (every call answered from it) to keep the outcome,
// or fails the task with REPLICA_LOST.
func (g *Tasks) endLeased(l *taskLease, d *Durable, t *resultstore.Task) {
	ctx, cancel := context.WithTimeout(context.Background(), SendTimeout)
	defer cancel()
	if l != nil {
		now, err := g.store.Get(ctx, t.Owner, t.ID)
		if !errors.Is(err, resultstore.ErrNotFound) && (err != nil || !now.Terminal()) {
			return
		}
		l.release()
	}
	if d != nil {
		_ = g.host.Durables.Store.DeleteJournal(ctx, d.ID, d.Holder)
	}
}

// releaseSettled releases l once task t is over in the store (its outcome
// kept) or gone; otherwise the lease lapses and a next scan takes the task
// over again, so that a task is never left working because one write of
// its outcome failed.
func (g *Tasks) releaseSettled(l *taskLease, t *resultstore.Task) {
	if l == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), SendTimeout)
	defer cancel()
	now, err := g.store.Get(ctx, t.Owner, t.ID)
	if errors.Is(err, resultstore.ErrNotFound) || err == nil && now.Terminal() {
		l.release()
	}
}

// storeUnavailable is a store failure that a later scan may not meet.
type storeUnavailable struct{ err error }

func (e *storeUnavailable) Error() string { return e.err.Error() }
func (e *storeUnavailable) Unwrap() error { return e.err }

// replicaLost is the result of a task failed with REPLICA_LOST.
func replicaLost(tool, why string) *mcp.CallToolResult {
	res := &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf("%s: the replica running this task (%s) stopped before it ended, and the task could not be continued on another replica: %s. What it did before is unknown; check before running it again.",
		codeReplicaLost, tool, why)}}}
	res.Meta = mcp.Meta{"isogate/code": codeReplicaLost}
	return res
}

// takeJournal takes the task's journal for holder (fencing off the lost
// replica) and reads it.
func (g *Tasks) takeJournal(ctx context.Context, rec leaseRecord, holder string) (*codemode.Journal, resultstore.JournalCursor, error) {
	var none resultstore.JournalCursor
	taker, ok := g.host.Durables.Store.(resultstore.JournalTaker)
	if !ok {
		return nil, none, errors.New("the journal store cannot hand journals over")
	}
	// Replaying runs a program read from the store, for the principal the
	// lease names, with nobody asking: only what this gateway sealed.
	if s, ok := g.host.Durables.Store.(interface{ Sealed() bool }); !ok || !s.Sealed() {
		return nil, none, errors.New("store.hmac_key is not set, so a journal read from the store cannot be trusted to run")
	}
	entries, at, err := taker.TakeJournal(ctx, rec.Owner, rec.Journal, holder)
	switch {
	case errors.Is(err, resultstore.ErrNotFound):
		return nil, none, errors.New("it has no journal (the replica stopped before writing it: no call was made, or it expired)")
	case errors.Is(err, resultstore.ErrTampered):
		return nil, none, fmt.Errorf("its journal: %w", err)
	case err != nil:
		return nil, none, &storeUnavailable{err}
	}
	entries, undurable := cutUndurable(entries)
	j, _, err := ReadJournal(entries)
	if err != nil {
		return nil, none, fmt.Errorf("its journal: %w", err)
	}
	if undurable != "" {
		return nil, none, &undurableJournal{j: j, why: undurable}
	}
	return j, at, nil
}

// resume runs a taken-over task's program again on this replica, from its
// journal, for the principal it ran for, and keeps its outcome as the
// task's.
func (g *Tasks) resume(t *resultstore.Task, rec leaseRecord, j *codemode.Journal, at resultstore.JournalCursor, l *taskLease) {
	ctx := withTakenOwner(context.Background(), rec.Owner)
	if p := rec.Principal; p != nil {
		ctx = authn.WithPrincipal(ctx, &authn.Principal{Name: p.Name, Groups: p.Groups, Scopes: p.Scopes})
	}
	// Nobody to ask: an approval the program needs now is refused.
	ctx = pipeline.WithApprover(ctx, pipeline.ElicitApprover{})
	tctx, cancelTTL := context.WithDeadline(ctx, t.CreatedAt.Add(t.TTL))
	tctx, cancel := context.WithCancelCause(tctx)
	tctx = l.withFence(tctx, cancel)
	rt := &runningTask{gt: g, cancel: cancel, done: make(chan struct{}), task: *t, lease: l}
	g.running.Store(t.ID, rt)
	d := g.taskDurable(rec.Owner, j, rec.Journal, time.Now().Add(g.host.RunTimeout(j)), l.holder, at, cancel)
	go func() {
		defer cancelTTL()
		defer cancel(nil)
		stopBeat := l.heartbeat(tctx, cancel)
		stopWatch := g.watchCancel(tctx, rt)
		res := g.host.RunJournal(WithDurable(tctx, d), j)
		stopWatch()
		stopBeat()
		rt.finish(res, nil, l.outcomeCause(tctx, context.Cause(tctx)))
		g.releaseSettled(l, t)
		// The journal is left to expire, held by this replica: the lost
		// replica, were it only paused, finds its writes fenced off and
		// stops (a deleted journal would take its write as a first one).
		g.running.Delete(t.ID)
		close(rt.done)
	}()
}

type takenOwnerKey struct{}

// withTakenOwner makes owner the owner of a taken-over run (its request
// came through another replica and is not here to say whose it is).
func withTakenOwner(ctx context.Context, owner string) context.Context {
	return context.WithValue(ctx, takenOwnerKey{}, owner)
}

// TakenOwner is the owner of a taken-over run ctx carries (its request
// came through another replica); ok false for any other run.
func TakenOwner(ctx context.Context) (owner string, ok bool) {
	owner, ok = ctx.Value(takenOwnerKey{}).(string)
	return owner, ok
}
