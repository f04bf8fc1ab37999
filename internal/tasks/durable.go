package tasks

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"sync"
	"time"

	"github.com/isogate/isogate/internal/codemode"
	"github.com/isogate/isogate/internal/resultstore"
)

// Durable runs across replicas (sandbox.durable, codemode/durable.go): a
// run's journal goes to the store shared by the replicas, so that another
// replica can take the run over by replay. A paused run names its journal
// in the requestState it hands the client (internal/approvals/durable.go); a
// leased task names it in its lease (leases.go).

// Durable is what a replica keeps of a durable run it serves.
type Durable struct {
	// Run journals the run (codemode); set once, right after NewDurable.
	Run *codemode.DurableRun
	// ID is the run's key in the journal store.
	ID string
	// Holder is this replica's claim on it.
	Holder string
	// Task: the run is a task's (its journal is under the task's id, named
	// by its lease): the task's end drops the journal, once its outcome is
	// kept, never the run's.
	Task bool

	mu sync.Mutex
	at resultstore.JournalCursor // where this replica appends to the journal next
}

// NewDurable is the durable run id held as holder, appending at at; its Run
// is set by the caller.
func NewDurable(id, holder string, task bool, at resultstore.JournalCursor) *Durable {
	return &Durable{ID: id, Holder: holder, Task: task, at: at}
}

// Durables writes durable runs' journals to the store.
type Durables struct {
	// Store keeps the journals; nil: runs are not durable.
	Store resultstore.Journals
	// Durability says which runs are journalled (sandbox.durable).
	Durability codemode.Durability
	// Limits bound one run's journal.
	Limits codemode.DurableLimits
}

// On reports whether runs are journalled at all.
func (ds *Durables) On() bool {
	return ds.Store != nil && ds.Durability != "" && ds.Durability != codemode.DurableOff
}

// Append appends entries to d's journal in the store for owner, with pause
// as its pause token ("": not paused).
func (ds *Durables) Append(ctx context.Context, d *Durable, owner, pause string, entries [][]byte, deadline time.Time) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	next, err := ds.Store.AppendJournal(ctx, owner, d.ID, d.Holder, pause, d.at, entries, journalTTL(deadline))
	if err != nil {
		return err
	}
	d.at = next
	return nil
}

// Of is the durable run of journal j under id, held as holder from at;
// with sandbox.durable: all its journal is written through.
func (ds *Durables) Of(owner string, j *codemode.Journal, id, holder string, at resultstore.JournalCursor, deadline time.Time) *Durable {
	d := NewDurable(id, holder, false, at)
	var sink codemode.JournalSink
	if ds.Durability == codemode.DurableAll {
		sink = func(ctx context.Context, entries [][]byte) error {
			if entries == nil { // not durable any more: its journal is stale
				return ds.Store.DeleteJournal(ctx, id, d.Holder)
			}
			return ds.Append(ctx, d, owner, "", entries, deadline)
		}
	}
	d.Run = codemode.NewDurableRun(j, ds.Limits, sink)
	return d
}

// Claim claims d's journal id with the pause token a retry brought, and
// appends after what it holds from then on.
func (ds *Durables) Claim(ctx context.Context, d *Durable, owner, id, token string) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	_, at, err := ds.Store.ClaimJournal(ctx, owner, id, token, d.Holder)
	if err == nil {
		d.at = at
	}
	return err
}

// journalTTL is how long a paused run's journal is kept: the run's own
// deadline and a minute (as a parked run in memory).
func journalTTL(deadline time.Time) time.Duration { return time.Until(deadline) + time.Minute }

// pauseKind is the kind of the journal entry a pause appends after the
// run's own entries (codemode's kinds are other words).
const pauseKind = "pause"

// Paused is the journal entry of a pause: the approvals asked of the
// client, so that another replica resumes the run with their answers.
type Paused struct {
	K      string                     `json:"k"`    // pauseKind
	Asks   map[string]json.RawMessage `json:"asks"` // input request id → request
	NextID int                        `json:"next_id"`
}

// PauseEntry is the journal entry of a pause waiting for asks, the run's
// next input request id being nextID.
func PauseEntry(asks map[string]json.RawMessage, nextID int) ([]byte, error) {
	return json.Marshal(Paused{K: pauseKind, Asks: asks, NextID: nextID})
}

// ReadJournal reads a journal's entries: the run's journal and its last
// pause (zero when it never paused).
func ReadJournal(entries [][]byte) (*codemode.Journal, Paused, error) {
	var last Paused
	run := make([][]byte, 0, len(entries))
	for _, e := range entries {
		var p Paused
		if json.Unmarshal(e, &p) == nil && p.K == pauseKind {
			last = p
			continue
		}
		run = append(run, e)
	}
	j, err := codemode.ParseJournal(run)
	return j, last, err
}

type durableKey struct{}

// WithDurable returns ctx carrying the durable run d.
func WithDurable(ctx context.Context, d *Durable) context.Context {
	return context.WithValue(ctx, durableKey{}, d)
}

// DurableFrom is the durable run ctx carries, nil for none.
func DurableFrom(ctx context.Context) *Durable {
	d, _ := ctx.Value(durableKey{}).(*Durable)
	return d
}

// NewHolder is a fresh claim on a journal or a lease.
func NewHolder() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
