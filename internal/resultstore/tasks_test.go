package resultstore_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/isogate/isogate/internal/resultstore"
)

// TestTaskStores: in memory and on a real Redis, a principal's live tasks
// are bounded (past the maximum its oldest finished task is dropped; with
// none finished the new one is refused with ErrTooManyTasks), another
// owner's id is not found like an unknown one (get, cancel, list), a
// terminal task is never overwritten (a late outcome after a cancel is
// refused), and a task is gone after its TTL.
func TestTaskStores(t *testing.T) {
	for name, newStore := range map[string]func(t *testing.T) resultstore.TaskStore{
		"memory": func(*testing.T) resultstore.TaskStore { return resultstore.NewMemoryTasks(nil) },
		"redis": func(t *testing.T) resultstore.TaskStore {
			return resultstore.NewRedisTasks(newRedis(t, resultstore.Limits{}))
		},
	} {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			s := newStore(t)
			base := time.Now()
			mk := func(id, owner string, i int) *resultstore.Task {
				at := base.Add(time.Duration(i) * time.Millisecond)
				return &resultstore.Task{ID: id, Owner: owner, Status: resultstore.TaskWorking, CreatedAt: at, UpdatedAt: at, TTL: time.Minute}
			}
			for i, id := range []string{"a1", "a2"} {
				if err := s.Create(ctx, mk(id, "alice", i), 2); err != nil {
					t.Fatal(err)
				}
			}
			if err := s.Create(ctx, mk("a3", "alice", 3), 2); !errors.Is(err, resultstore.ErrTooManyTasks) {
				t.Fatalf("a third task while two work: %v, want ErrTooManyTasks", err)
			}
			if err := s.Create(ctx, mk("b1", "bob", 4), 2); err != nil {
				t.Fatalf("bob is not bounded by alice's tasks: %v", err)
			}
			done := mk("a2", "alice", 1)
			done.Status = resultstore.TaskCompleted
			if err := s.Update(ctx, done); err != nil {
				t.Fatal(err)
			}
			if err := s.Create(ctx, mk("a3", "alice", 5), 2); err != nil {
				t.Fatalf("a third task once one finished: %v", err)
			}
			if _, err := s.Get(ctx, "alice", "a2"); !errors.Is(err, resultstore.ErrNotFound) {
				t.Errorf("the finished task was not dropped to make room: %v", err)
			}
			if _, err := s.Get(ctx, "bob", "a1"); !errors.Is(err, resultstore.ErrNotFound) {
				t.Errorf("bob reads alice's task: %v", err)
			}
			if _, err := s.Cancel(ctx, "bob", "a1", "x"); !errors.Is(err, resultstore.ErrNotFound) {
				t.Errorf("bob cancels alice's task: %v", err)
			}
			if l, _ := s.List(ctx, "bob"); len(l) != 1 || l[0].ID != "b1" {
				t.Errorf("bob's list: %+v", l)
			}
			if c, err := s.Cancel(ctx, "alice", "a1", "by the client"); err != nil || c.Status != resultstore.TaskCancelled {
				t.Fatalf("cancel: %+v %v", c, err)
			}
			late := mk("a1", "alice", 0)
			late.Status = resultstore.TaskCompleted
			if err := s.Update(ctx, late); !errors.Is(err, resultstore.ErrTaskTerminal) {
				t.Errorf("an outcome after the cancel: %v, want ErrTaskTerminal", err)
			}
			if got, _ := s.Get(ctx, "alice", "a1"); got == nil || got.Status != resultstore.TaskCancelled {
				t.Errorf("after a late outcome: %+v", got)
			}
			short := mk("gone", "carol", 0)
			short.CreatedAt, short.TTL = time.Now().Add(-time.Minute), time.Second
			_ = s.Create(ctx, short, 2)
			if _, err := s.Get(ctx, "carol", "gone"); !errors.Is(err, resultstore.ErrNotFound) {
				t.Errorf("a task past its TTL: %v", err)
			}
		})
	}
}
