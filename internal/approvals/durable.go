package approvals

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/isogate/isogate/internal/codemode"
	"github.com/isogate/isogate/internal/resultstore"
	"github.com/isogate/isogate/internal/tasks"
)

// Durable runs across replicas (sandbox.durable, codemode/durable.go). A
// 2026-07-28 client's run that pauses for approvals is journalled: its
// journal, with the approval requests asked, goes to the store (Redis
// shared by the replicas), and the requestState names it:
// "durable-<run id>-<pause token>". The retry returns to the replica that
// keeps the run in memory, which continues it, or reaches another one,
// which claims the journal (single use: whichever replica claims it first
// owns the run, the other's copy is fenced off), re-executes the program
// answering the journalled calls from the journal, gives the paused call
// the retry's answer and continues live.

// durablePrefix starts the requestState of a durable paused run.
const durablePrefix = "durable-"

// randomHex is n random bytes in hex.
func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// runDurable is the durable run of a new run of in: the task's, when ctx
// is a journalled task's (a 2026-07-28 client's task runs its program in
// rounds, and its lease names the task's journal: a replica taking the task
// over replays that one), else a new one (nil when runs are not durable).
func (rs *Rounds) runDurable(ctx context.Context, owner string, in Program, deadline time.Time) *tasks.Durable {
	if d := tasks.DurableFrom(ctx); d != nil && d.Task {
		return d
	}
	return rs.newDurable(owner, in, deadline)
}

// newDurable starts the journal of a run of in for owner, or returns nil
// when runs are not durable.
func (rs *Rounds) newDurable(owner string, in Program, deadline time.Time) *tasks.Durable {
	if !rs.h.Durables.On() {
		return nil
	}
	j := codemode.NewJournal(in.Code, in.Timeout, in.MaxOutputSize, in.Intent)
	return rs.h.Durables.Of(owner, j, randomHex(16), tasks.NewHolder(), resultstore.JournalCursor{}, deadline)
}

// pauseDurable writes a durable run's journal with the approvals it waits
// for, and returns the requestState naming it; "" when the run cannot be
// resumed elsewhere (not durable, an input request of a backend, the store
// refused it), and then the run stays in this replica's memory only.
func (rs *Rounds) pauseDurable(ctx context.Context, run *liveRun, requests mcp.InputRequestMap) string {
	d := run.durable
	if d == nil {
		return ""
	}
	asks := map[string]json.RawMessage{}
	for id, k := range run.pending {
		if !k.approval {
			return "" // a backend's round: its requestState is the backend's, in this replica's run
		}
		asks[id], _ = json.Marshal(requests[id])
	}
	if durable, _ := d.Run.Durable(); !durable {
		return ""
	}
	rec, err := tasks.PauseEntry(asks, run.nextID)
	if err != nil {
		return ""
	}
	token := randomHex(16)
	err = d.Run.Flush(ctx, func(ctx context.Context, entries [][]byte) error {
		return rs.h.Durables.Append(ctx, d, run.owner, token, append(entries, rec), run.deadline)
	})
	if err != nil {
		rs.h.Logger.Warn("durable run's journal not kept: it resumes on this replica only",
			slog.String("run", d.ID), slog.Any("error", err))
		return ""
	}
	return durablePrefix + d.ID + "-" + token
}

// takeoverCheckEvery is how often a replica checks that it still holds
// the journal of a durable run parked in its memory.
const takeoverCheckEvery = time.Second

// watchTakeover ends run, paused durably and parked under state, once
// another replica claimed its journal (the client's retry went there, and
// that replica resumed the run by replay) or the journal is gone: until
// then this replica's copy waits, holding its sandbox slot, for a retry
// that will not come. It stops when the run ends or a retry here takes it
// (whose claim then decides, see claimLocal). A store it cannot reach
// changes nothing: nobody else could claim the journal either.
func (rs *Rounds) watchTakeover(run *liveRun, state string) {
	d := run.durable
	tick := time.NewTicker(takeoverCheckEvery)
	defer tick.Stop()
	for {
		select {
		case <-run.ended:
			return
		case <-tick.C:
		}
		if !rs.trips.parkedAs(state, run) {
			return
		}
		held, err := rs.h.Durables.Store.HoldsJournal(context.Background(), d.ID, d.Holder)
		if err != nil || held {
			continue
		}
		if rs.trips.drop(state, run) {
			rs.h.Logger.Info("durable run resumed by another replica: its paused copy here ends", slog.String("run", d.ID))
			run.cancel()
		}
		return
	}
}

// parseDurableState splits a durable requestState.
func parseDurableState(state string) (id, token string, ok bool) {
	rest, ok := strings.CutPrefix(state, durablePrefix)
	if !ok {
		return "", "", false
	}
	id, token, ok = strings.Cut(rest, "-")
	return id, token, ok && id != "" && token != ""
}

// claimLocal makes sure this replica still owns a durable run its retry
// reached: no other replica claimed its journal first.
func (rs *Rounds) claimLocal(ctx context.Context, run *liveRun, state string) bool {
	id, token, ok := parseDurableState(state)
	if !ok || run.durable == nil {
		return true
	}
	err := rs.h.Durables.Claim(ctx, run.durable, run.owner, id, token)
	if errors.Is(err, resultstore.ErrNotFound) || errors.Is(err, resultstore.ErrTampered) {
		return false
	}
	return true // the store is down: nobody else could claim it either
}

// resumeDurable resumes, on this replica, a durable run paused on another
// one: it claims the journal and starts the run again by replay, with the
// retry's answers to the approvals it paused for.
func (rs *Rounds) resumeDurable(ctx context.Context, req *mcp.CallToolRequest, owner, state string) (*liveRun, *mcp.CallToolResult) {
	id, token, ok := parseDurableState(state)
	if !ok || rs.h.Durables.Store == nil {
		return nil, refused("call_tool_chain: unknown or expired requestState (the run it named has ended); run the program again")
	}
	holder := tasks.NewHolder()
	entries, at, err := rs.h.Durables.Store.ClaimJournal(ctx, owner, id, token, holder)
	switch {
	case errors.Is(err, resultstore.ErrTampered):
		rs.h.Logger.Warn("durable run's journal refused", slog.String("run", id), slog.Any("error", err))
		return nil, refused(fmt.Sprintf("call_tool_chain: %s: the paused run's journal failed its integrity check (store.hmac_key) and was refused; run the program again", codeJournalTampered))
	case err != nil:
		return nil, refused("call_tool_chain: unknown or expired requestState (the run it named has ended or was resumed already): " + err.Error())
	}
	j, rec, err := tasks.ReadJournal(entries)
	if err != nil {
		return nil, refused("call_tool_chain: the paused run's journal cannot be read: " + err.Error())
	}
	in := Program{Code: j.Code, Timeout: j.TimeoutMS, MaxOutputSize: j.MaxOutputSize, Intent: j.Intent}
	deadline := time.Now().Add(rs.h.RunTimeout(in))
	d := rs.h.Durables.Of(owner, j, id, holder, at, deadline)
	preset := map[string]mcp.InputResponse{}
	for askID, request := range rec.Asks {
		if res, ok := req.Params.InputResponses[askID]; ok {
			preset[string(request)] = res
		}
	}
	run := rs.startRun(ctx, req, owner, in, deadline, d, preset)
	run.nextID = rec.NextID // the request serving the run numbers its input requests
	rs.h.Logger.Info("durable run resumed by replay", slog.String("run", id), slog.Int("journalled_calls", d.Run.Replayed()))
	return run, nil
}

// codeJournalTampered is the code of a resume refused because its journal
// failed the integrity check.
const codeJournalTampered = "JOURNAL_TAMPERED"

// presetAnswer returns the retry's answer to request when the run was
// resumed with one for it (the approval a replayed call paused for).
func (r *liveRun) presetAnswer(request mcp.InputRequest) (mcp.InputResponse, bool) {
	if len(r.preset) == 0 {
		return nil, false
	}
	key, err := json.Marshal(request)
	if err != nil {
		return nil, false
	}
	r.presetMu.Lock()
	defer r.presetMu.Unlock()
	res, ok := r.preset[string(key)]
	if ok {
		delete(r.preset, string(key))
	}
	return res, ok
}

// endDurable forgets a finished run's journal (a task's is forgotten by
// the task, once its outcome is kept).
func (rs *Rounds) endDurable(run *liveRun) {
	if run.durable != nil && !run.durable.Task {
		_ = rs.h.Durables.Store.DeleteJournal(context.Background(), run.durable.ID, run.durable.Holder)
	}
}

// journalApproval marks the call of ctx as paused for an approval in its
// durable run and returns the function journalling the answer (a no-op
// outside a durable run).
func journalApproval(ctx context.Context) func(bool) {
	if answer, ok := codemode.MarkAsking(ctx); ok {
		return answer
	}
	return func(bool) {}
}
