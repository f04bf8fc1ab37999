package interop

import (
	"slices"
	"strings"
	"syscall"
	"testing"
)

// gatewayTasksReport is the report of scripts/gateway_tasks.mjs.
type gatewayTasksReport struct {
	Execution struct {
		Research, Chain, Sum map[string]any
	}
	ServerTasks map[string]any
	Run         struct {
		TaskID   string
		Statuses []string
		Messages []string
		Result   struct {
			IsError bool
			Text    string
			Meta    map[string]any
		}
		Error string
	}
	StatusNotifications []string
	Cancel              struct {
		TaskID       string
		CancelAnswer string
		Statuses     []string
		Error        string
		After        string
		Again        attemptReport
	}
	Chain struct {
		TaskID   string
		Messages []string
		Result   struct {
			IsError bool
			Text    string
		}
		Error string
	}
	List []struct {
		ID     string
		Status string
	}
	Unknown attemptReport
	Foreign *struct {
		Get, Result, Cancel attemptReport
	}
}

// attemptReport is what attempt() in lib/connect.mjs reports.
type attemptReport struct {
	OK    bool
	Error struct {
		Code    int
		Message string
	}
}

// TestTypeScriptSDKGatewayTasks: the official TypeScript SDK client,
// declaring tasks, uses its experimental tasks API through isogate over
// stdio and HTTP (expose both): isogate declares the tasks capability and
// lists server-everything's task-required simulate-research-query and
// call_tool_chain with taskSupport optional (get-sum without); the
// research tool runs as a task to completion, its status messages seen by
// tasks/get and its result read with tasks/result (tied to the task by
// _meta); a second one is cancelled at once (cancelled, and cancelling it
// again is refused); a call_tool_chain program runs as a task with the
// backend's status as its status messages; tasks/list lists the caller's
// three tasks; an unknown id is not found. Over HTTP with two principals,
// bob gets "not found" for alice's task id from tasks/get, tasks/result and
// tasks/cancel, word for word as for an unknown id, and lists only his own.
func TestTypeScriptSDKGatewayTasks(t *testing.T) {
	t.Parallel()
	check := func(t *testing.T, r *gatewayTasksReport, stdio bool) {
		t.Helper()
		if r.Execution.Research["taskSupport"] != "optional" || r.Execution.Chain["taskSupport"] != "optional" || r.Execution.Sum != nil {
			t.Errorf("execution listed: %+v", r.Execution)
		}
		if _, ok := r.ServerTasks["requests"]; !ok {
			t.Errorf("server tasks capability: %v", r.ServerTasks)
		}
		if r.Run.Error != "" || r.Run.Result.IsError || !strings.Contains(r.Run.Result.Text, "# Research Report: interop") {
			t.Fatalf("research as a task: %+v", r.Run)
		}
		if !slices.Contains(r.Run.Messages, "Gathering sources...") || r.Run.Statuses[len(r.Run.Statuses)-1] != "completed" {
			t.Errorf("status messages %q, statuses %q", r.Run.Messages, r.Run.Statuses)
		}
		if rel, _ := r.Run.Result.Meta["io.modelcontextprotocol/related-task"].(map[string]any); rel["taskId"] != r.Run.TaskID {
			t.Errorf("result _meta %v, task %s", r.Run.Result.Meta, r.Run.TaskID)
		}
		if stdio && !slices.Contains(r.StatusNotifications, "completed") {
			t.Errorf("notifications/tasks/status over stdio: %q", r.StatusNotifications)
		}
		if r.Cancel.CancelAnswer != "cancelled" || r.Cancel.After != "cancelled" || !strings.Contains(r.Cancel.Error, "cancelled") {
			t.Errorf("cancel: %+v", r.Cancel)
		}
		if r.Cancel.Again.OK || r.Cancel.Again.Error.Code != -32602 {
			t.Errorf("cancelling a cancelled task: %+v", r.Cancel.Again)
		}
		if r.Chain.Error != "" || r.Chain.Result.IsError || !strings.Contains(r.Chain.Result.Text, "Research Report: chain") {
			t.Fatalf("program as a task: %+v", r.Chain)
		}
		if !slices.ContainsFunc(r.Chain.Messages, func(m string) bool { return strings.HasPrefix(m, "everything: ") }) {
			t.Errorf("program's status messages: %q", r.Chain.Messages)
		}
		var ids []string
		for _, l := range r.List {
			ids = append(ids, l.ID)
		}
		if want := []string{r.Run.TaskID, r.Cancel.TaskID, r.Chain.TaskID}; !slices.Equal(ids, want) {
			t.Errorf("tasks/list %q, want %q", ids, want)
		}
		if r.Unknown.OK || r.Unknown.Error.Code != -32602 || !strings.Contains(r.Unknown.Error.Message, "not found") {
			t.Errorf("unknown task id: %+v", r.Unknown)
		}
	}
	concurrently(t, map[string]func(t *testing.T){
		"stdio": func(t *testing.T) {
			var r gatewayTasksReport
			runNodeInto(t, &r, "gateway_tasks.mjs", "--stdio", "/usr/bin/env", "ISOGATE_SERVER__EXPOSE=both", binary, "serve", "--config", config)
			check(t, &r, true)
		},
		"http": func(t *testing.T) {
			gw := startHTTPEnv("ISOGATE_SERVER__AUTH__MODE=token", "ISOGATE_SERVER__EXPOSE=both",
				"ISOGATE_SERVER__AUTH__TOKENS__ALICE__TOKEN=alice-tasks-token",
				"ISOGATE_SERVER__AUTH__TOKENS__BOB__TOKEN=bob-tasks-token-1")
			t.Cleanup(func() {
				if gw.cmd != nil && gw.cmd.Process != nil {
					_ = gw.cmd.Process.Signal(syscall.SIGKILL)
					_ = gw.cmd.Wait()
				}
			})
			if gw.err != nil {
				t.Fatalf("HTTP gateway: %v\n%s", gw.err, gw.logs)
			}
			var alice gatewayTasksReport
			runNodeInto(t, &alice, "gateway_tasks.mjs", "--http", gw.url, "--token", "alice-tasks-token")
			check(t, &alice, false)
			var bob gatewayTasksReport
			runNodeInto(t, &bob, "gateway_tasks.mjs", "--http", gw.url, "--token", "bob-tasks-token-1", "--foreign", alice.Run.TaskID)
			check(t, &bob, false)
			if bob.Foreign == nil {
				t.Fatal("no foreign report")
			}
			for name, a := range map[string]attemptReport{"get": bob.Foreign.Get, "result": bob.Foreign.Result, "cancel": bob.Foreign.Cancel} {
				if a.OK || a.Error != bob.Unknown.Error {
					t.Errorf("bob's tasks/%s of alice's task: %+v, want as unknown: %+v", name, a, bob.Unknown.Error)
				}
			}
		},
	})
}
