package interop

import (
	"slices"
	"strings"
	"syscall"
	"testing"
)

// gatewayTaskInputReport is the report of scripts/gateway_task_input.mjs.
type gatewayTaskInputReport struct {
	Approval, Backend *taskInputRun
	ApprovalAsked     []taskInputAsk
	BackendAsked      []taskInputAsk
}

// taskInputRun is one program run as a task, as the client saw it.
type taskInputRun struct {
	TaskID   string
	Statuses []string
	Result   struct {
		IsError bool
		Text    string
	}
	Error string
	After string
}

// taskInputAsk is one elicitation the client's handler answered.
type taskInputAsk struct {
	Message     string
	RelatedTask string
}

// TestTypeScriptSDKGatewayTaskInput: the official TypeScript SDK client,
// declaring tasks and elicitation, runs through isogate (stdio and HTTP
// with sessions) a call_tool_chain program as a task whose call of echo
// needs approval (backends.everything.tools.approve): tasks/get shows the
// task input_required; the SDK's tasks/result receives the approval's
// elicitation, tied to the task by _meta["io.modelcontextprotocol/related-task"];
// its handler accepts and the task completes with echo's answer. Over
// stdio a program calling the backend's own trigger-elicitation-request
// as a task gets the backend's elicitation the same way.
func TestTypeScriptSDKGatewayTaskInput(t *testing.T) {
	t.Parallel()
	check := func(t *testing.T, r *gatewayTaskInputReport, backend bool) {
		t.Helper()
		runs := map[string]*taskInputRun{"approval": r.Approval}
		asks := map[string][]taskInputAsk{"approval": r.ApprovalAsked}
		want := map[string]string{"approval": "Echo: approved in a task"}
		if backend {
			runs["backend"], asks["backend"], want["backend"] = r.Backend, r.BackendAsked, "Ada"
		}
		for name, run := range runs {
			if run == nil {
				t.Fatalf("%s: no report", name)
			}
			if run.Error != "" || run.Result.IsError || !strings.Contains(run.Result.Text, want[name]) || run.After != "completed" {
				t.Errorf("%s: %+v", name, run)
			}
			if !slices.Contains(run.Statuses, "input_required") {
				t.Errorf("%s: statuses seen by tasks/get %q, want input_required among them", name, run.Statuses)
			}
			if len(asks[name]) != 1 || asks[name][0].RelatedTask != run.TaskID {
				t.Errorf("%s: elicitations %+v, want one tied to task %s", name, asks[name], run.TaskID)
			}
		}
	}
	const approve = "ISOGATE_BACKENDS__EVERYTHING__TOOLS__APPROVE=echo"
	concurrently(t, map[string]func(t *testing.T){
		"stdio": func(t *testing.T) {
			var r gatewayTaskInputReport
			runNodeInto(t, &r, "gateway_task_input.mjs", "--backend", "yes", "--stdio", "/usr/bin/env", approve, binary, "serve", "--config", config)
			check(t, &r, true)
		},
		"http": func(t *testing.T) {
			gw := startHTTPEnv(approve)
			t.Cleanup(func() {
				if gw.cmd != nil && gw.cmd.Process != nil {
					_ = gw.cmd.Process.Signal(syscall.SIGKILL)
					_ = gw.cmd.Wait()
				}
			})
			if gw.err != nil {
				t.Fatalf("HTTP gateway: %v\n%s", gw.err, gw.logs)
			}
			var r gatewayTaskInputReport
			runNodeInto(t, &r, "gateway_task_input.mjs", "--backend", "yes", "--http", gw.url)
			check(t, &r, true)
		},
	})
}
