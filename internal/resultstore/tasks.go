package resultstore

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"
)

// Task statuses (MCP 2025-11-25, tasks utility).
const (
	TaskWorking       = "working"
	TaskInputRequired = "input_required"
	TaskCompleted     = "completed"
	TaskFailed        = "failed"
	TaskCancelled     = "cancelled"
)

// Task is the state of one task the gateway runs for a client (MCP Tasks):
// what tasks/get answers, whoever replica asks. Its outcome (the result or
// the JSON-RPC error of the call) is kept in the result store under
// ResultID, so that it counts in the owner's byte budget like any result.
type Task struct {
	ID            string    `json:"id"`
	Owner         string    `json:"owner"` // an owner key (OwnerKey): budgets per account
	Status        string    `json:"status"`
	StatusMessage string    `json:"statusMessage,omitempty"`
	CreatedAt     time.Time `json:"createdAt"`
	UpdatedAt     time.Time `json:"updatedAt"`
	// TTL is how long the task is kept from its creation.
	TTL time.Duration `json:"ttl"`
	// Deadline is when the replica running the task surely ended its run
	// (the run's timeout); zero: none known. A task not over by Deadline
	// and a lease is ended by whichever replica sees it (TASK_EXPIRED).
	Deadline time.Time `json:"deadline,omitzero"`
	ResultID string    `json:"resultId,omitempty"`
	// InputRequests are the outstanding input requests (by key) of a task
	// in input_required (MCP 2026-07-28 tasks extension).
	InputRequests json.RawMessage `json:"inputRequests,omitempty"`
}

// Terminal reports whether the task is over (completed, failed or
// cancelled): its status no longer changes.
func (t *Task) Terminal() bool { return TaskTerminal(t.Status) }

// TaskTerminal reports whether status is a terminal task status.
func TaskTerminal(status string) bool {
	return status == TaskCompleted || status == TaskFailed || status == TaskCancelled
}

// expiresAt is when the task is dropped.
func (t *Task) expiresAt() time.Time { return t.CreatedAt.Add(t.TTL) }

// Errors of task stores (besides ErrNotFound for an unknown, expired or
// foreign task id).
var (
	// ErrTooManyTasks means the account already holds its maximum of
	// tasks and none of them is finished (one finished would be dropped).
	ErrTooManyTasks = errors.New("too many tasks in progress for this principal")
	// ErrTaskTerminal means a task is already over: it cannot be
	// cancelled, and its status no longer changes.
	ErrTaskTerminal = errors.New("task already in a terminal status")
)

// TaskStore keeps task state for owners, as [Store] keeps results: an
// owner reads only its own tasks, and another owner's id is ErrNotFound
// exactly like an unknown one. Implementations are safe for concurrent
// use; every replica sharing one (Redis) sees the same tasks.
type TaskStore interface {
	// Create stores a new task. When its account already holds max live
	// tasks, its oldest finished task is dropped to make room; when none
	// is finished, Create fails with ErrTooManyTasks.
	Create(ctx context.Context, t *Task, max int) error
	// Get returns owner's task id.
	Get(ctx context.Context, owner, id string) (*Task, error)
	// Update writes t's status, message and result, unless the stored
	// task is already terminal (ErrTaskTerminal) or gone (ErrNotFound).
	Update(ctx context.Context, t *Task) error
	// Cancel moves owner's task id to cancelled with message, unless it
	// is terminal already (ErrTaskTerminal, with the task).
	Cancel(ctx context.Context, owner, id, message string) (*Task, error)
	// List returns owner's live tasks, oldest first.
	List(ctx context.Context, owner string) ([]*Task, error)
}

// HeldTaskStore is a [TaskStore] that can fence a write with a lease
// ([Leases] on the same store): UpdateHeld is Update done only while
// holder holds the lease of t.ID, checked and written at once; otherwise
// it fails with ErrLeaseLost and writes nothing.
type HeldTaskStore interface {
	TaskStore
	UpdateHeld(ctx context.Context, t *Task, holder string) error
}

// MemoryTasks is the in-process [TaskStore].
type MemoryTasks struct {
	now func() time.Time

	mu    sync.Mutex
	tasks map[string]*Task
}

// NewMemoryTasks returns an empty in-memory task store; now reads the
// clock (nil: time.Now).
func NewMemoryTasks(now func() time.Time) *MemoryTasks {
	if now == nil {
		now = time.Now
	}
	return &MemoryTasks{now: now, tasks: map[string]*Task{}}
}

// expireLocked drops the tasks past their TTL.
func (m *MemoryTasks) expireLocked() {
	now := m.now()
	for id, t := range m.tasks {
		if !now.Before(t.expiresAt()) {
			delete(m.tasks, id)
		}
	}
}

// Create implements [TaskStore].
func (m *MemoryTasks) Create(_ context.Context, t *Task, max int) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.expireLocked()
	account := AccountOf(t.Owner)
	var mine []*Task
	for _, o := range m.tasks {
		if AccountOf(o.Owner) == account {
			mine = append(mine, o)
		}
	}
	if max > 0 && len(mine) >= max {
		slices.SortFunc(mine, func(a, b *Task) int { return a.CreatedAt.Compare(b.CreatedAt) })
		i := slices.IndexFunc(mine, (*Task).Terminal)
		if i < 0 {
			return fmt.Errorf("%w (%d)", ErrTooManyTasks, max)
		}
		delete(m.tasks, mine[i].ID)
	}
	c := *t
	m.tasks[t.ID] = &c
	return nil
}

// getLocked returns owner's live task id.
func (m *MemoryTasks) getLocked(owner, id string) (*Task, error) {
	m.expireLocked()
	t, ok := m.tasks[id]
	if !ok || subtle.ConstantTimeCompare([]byte(t.Owner), []byte(owner)) != 1 {
		return nil, fmt.Errorf("task %w", ErrNotFound)
	}
	return t, nil
}

// Get implements [TaskStore].
func (m *MemoryTasks) Get(_ context.Context, owner, id string) (*Task, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	t, err := m.getLocked(owner, id)
	if err != nil {
		return nil, err
	}
	c := *t
	return &c, nil
}

// Update implements [TaskStore].
func (m *MemoryTasks) Update(_ context.Context, t *Task) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	cur, err := m.getLocked(t.Owner, t.ID)
	if err != nil {
		return err
	}
	if cur.Terminal() {
		return ErrTaskTerminal
	}
	cur.Status, cur.StatusMessage, cur.ResultID, cur.UpdatedAt = t.Status, t.StatusMessage, t.ResultID, t.UpdatedAt
	cur.InputRequests = t.InputRequests
	return nil
}

// Cancel implements [TaskStore].
func (m *MemoryTasks) Cancel(_ context.Context, owner, id, message string) (*Task, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	cur, err := m.getLocked(owner, id)
	if err != nil {
		return nil, err
	}
	if !cur.Terminal() {
		cur.Status, cur.StatusMessage, cur.UpdatedAt = TaskCancelled, message, m.now()
		err = nil
	} else {
		err = ErrTaskTerminal
	}
	c := *cur
	return &c, err
}

// List implements [TaskStore].
func (m *MemoryTasks) List(_ context.Context, owner string) ([]*Task, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.expireLocked()
	var out []*Task
	for _, t := range m.tasks {
		if subtle.ConstantTimeCompare([]byte(t.Owner), []byte(owner)) == 1 {
			c := *t
			out = append(out, &c)
		}
	}
	slices.SortFunc(out, func(a, b *Task) int { return a.CreatedAt.Compare(b.CreatedAt) })
	return out, nil
}
