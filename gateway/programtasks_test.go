package gateway

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/isogate/isogate/internal/resultstore/redistest"
	"github.com/isogate/isogate/internal/tasks"
)

// TestSavedProgramAsDurableTask (issue 45): a saved program called as a
// task (tools/call of program_<name> with the task parameter) is a
// call_tool_chain task in every way, its journal included: with
// sandbox.durable: all its calls are journalled, so when replica A is lost
// after the program's first call (a hook stops it at the journal write
// that says the call is done) replica B takes the task over from the
// journal and completes it without making that call again: two backend
// calls in all. Red while the tasks saw the program's own tool name: the
// task was not journalled (the hook never fired) and nothing was
// replayed. A version 2 saved while the task runs is not what B runs: the
// call is pinned to the version current when it was made.
func TestSavedProgramAsDurableTask(t *testing.T) {
	srv := redistest.ForTest(t)
	counter := newCountingBackend()
	urlA, a := leasedReplica(t, srv.URL(), counter, false)
	urlB, _ := leasedReplica(t, srv.URL(), counter, true)
	_, saved, err := taskRPC(context.Background(), urlA, "alice", taskWire{}, "tools/call", map[string]any{"name": "save_program",
		"arguments": map[string]any{"name": "bump_twice", "description": "Bumps the counter twice.", "code": twoBumps}})
	if err != nil || saved.Error != nil || strings.Contains(string(saved.Result), `"isError":true`) {
		t.Fatalf("save: %v %+v %s", err, saved.Error, saved.Result)
	}
	// The journal writes of the task: 1 its begin, 2 call #1 started,
	// 3 #1 done, 4 #2 started: A stops there.
	h := &stepHook{step: TaskStepAt{tasks.StepJournalWrite, 4, tasks.TaskKill}}
	a.app.Surface.SetTaskHook(h.hook)
	defer a.app.Surface.SetTaskHook(nil)
	_, created, err := taskRPC(context.Background(), urlA, "alice", taskWire{}, "tools/call", map[string]any{"name": "program_bump_twice",
		"arguments": map[string]any{}, "task": map[string]any{"ttl": 120000}})
	var task struct {
		Task struct {
			TaskID string `json:"taskId"`
		} `json:"task"`
	}
	if err != nil || created.Error != nil || json.Unmarshal(created.Result, &task) != nil || task.Task.TaskID == "" {
		t.Fatalf("creating the task: %v %+v %s", err, created.Error, created.Result)
	}
	// A version 2 made current meanwhile changes nothing for the task: its
	// call named bump_twice@1.
	_, saved, err = taskRPC(context.Background(), urlA, "alice", taskWire{}, "tools/call", map[string]any{"name": "save_program",
		"arguments": map[string]any{"name": "bump_twice", "description": "Version 2.", "code": `return "version 2"`}})
	if err != nil || saved.Error != nil || !strings.Contains(string(saved.Result), "bump_twice@2") {
		t.Fatalf("saving version 2: %v %+v %s", err, saved.Error, saved.Result)
	}
	_, res, err := taskRPC(context.Background(), urlB, "alice", taskWire{}, "tasks/result", map[string]any{"taskId": task.Task.TaskID})
	if err != nil {
		t.Fatal(err)
	}
	h.mu.Lock()
	stopped := h.did
	h.mu.Unlock()
	if !stopped {
		t.Fatalf("the task's journal was never written to its fourth entry: not journalled (outcome %s)", res.Result)
	}
	if !strings.Contains(string(res.Result), "bumped 1") {
		t.Errorf("outcome through B: %s %+v, want bumped 1", res.Result, res.Error)
	}
	if n := counter.count(); n != 2 {
		t.Errorf("the backend received %d calls, want 2 (none made twice)", n)
	}
}
