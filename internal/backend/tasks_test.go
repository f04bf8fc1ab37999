package backend

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/isogate/isogate/config"
)

// taskBackend is an in-process backend speaking raw JSON-RPC, with the MCP
// Tasks (2025-11-25) that no go-sdk server offers: its tool "slow" requires
// a task, "plain" has taskSupport optional. Its one task moves only when
// the test says (set); every move is announced with
// notifications/tasks/status, and the task suggests a poll interval far
// above the gateway's ceiling, so that the test never waits on a clock.
type taskBackend struct {
	mu      sync.Mutex
	conn    mcp.Connection
	status  string
	message string
	result  json.RawMessage // what tasks/result answers once the task is over; nil: an error
	over    chan struct{}   // closed when the task reaches a terminal status

	drop       bool                // close the connection on the next task-augmented tools/call
	calls      chan map[string]any // params of each tools/call
	cancels    chan string         // task ids of tasks/cancel
	resultAsks chan string         // the task's status when tasks/result arrived
}

const fakeTaskID = "task-1"

func newTaskBackend(t *testing.T) *taskBackend {
	return &taskBackend{
		status: taskWorking, message: "starting", over: make(chan struct{}),
		calls: make(chan map[string]any, 10), cancels: make(chan string, 10), resultAsks: make(chan string, 10),
	}
}

// spec returns the backend's Spec (one connection: the test's backend
// never restarts).
func (f *taskBackend) spec(timeout time.Duration) Spec {
	return Spec{Backend: config.Backend{Name: "tasks", Transport: TransportCustom, Timeout: timeout},
		Dial: func(ctx context.Context) (mcp.Transport, error) {
			ct, st := mcp.NewInMemoryTransports()
			conn, err := st.Connect(ctx)
			if err != nil {
				return nil, err
			}
			f.mu.Lock()
			f.conn = conn
			f.mu.Unlock()
			go f.serve(conn)
			return ct, nil
		}}
}

func (f *taskBackend) serve(conn mcp.Connection) {
	for {
		msg, err := conn.Read(context.Background())
		if err != nil {
			return
		}
		req, ok := msg.(*jsonrpc.Request)
		if !ok || !req.ID.IsValid() {
			continue // responses and notifications: nothing to answer
		}
		var params map[string]any
		_ = json.Unmarshal(req.Params, &params)
		switch req.Method {
		case "initialize":
			f.reply(req, map[string]any{
				"protocolVersion": params["protocolVersion"],
				"serverInfo":      map[string]any{"name": "tasks", "version": "1"},
				"capabilities": map[string]any{"tools": map[string]any{},
					"tasks": map[string]any{"list": map[string]any{}, "cancel": map[string]any{},
						"requests": map[string]any{"tools": map[string]any{"call": map[string]any{}}}}},
			}, nil)
		case "tools/list":
			f.reply(req, map[string]any{"tools": []any{
				map[string]any{"name": "slow", "inputSchema": map[string]any{"type": "object"},
					"execution": map[string]any{"taskSupport": "required"}},
				map[string]any{"name": "plain", "inputSchema": map[string]any{"type": "object"},
					"execution": map[string]any{"taskSupport": "optional"}},
			}}, nil)
		case "tools/call":
			f.calls <- params
			if params["task"] == nil {
				f.reply(req, textResult("plain "+params["name"].(string)), nil)
				continue
			}
			f.mu.Lock()
			drop := f.drop
			f.drop = false
			f.mu.Unlock()
			if drop {
				_ = conn.Close()
				return
			}
			f.reply(req, map[string]any{"task": f.task()}, nil)
		case "tasks/get":
			f.reply(req, f.task(), nil)
		case "tasks/result":
			go f.answerResult(req)
		case "tasks/cancel":
			f.cancels <- params["taskId"].(string)
			f.set(taskCancelled, "cancelled by request", nil)
			f.reply(req, f.task(), nil)
		case "ping":
			f.reply(req, map[string]any{}, nil)
		default:
			f.reply(req, nil, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "no " + req.Method})
		}
	}
}

// answerResult answers tasks/result once the task is over, as the spec
// says: blocking until then.
func (f *taskBackend) answerResult(req *jsonrpc.Request) {
	f.mu.Lock()
	f.resultAsks <- f.status
	over := f.over
	f.mu.Unlock()
	<-over
	f.mu.Lock()
	result := f.result
	f.mu.Unlock()
	if result == nil {
		f.reply(req, nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "the work broke"})
		return
	}
	f.reply(req, result, nil)
}

func (f *taskBackend) task() map[string]any {
	f.mu.Lock()
	defer f.mu.Unlock()
	return map[string]any{"taskId": fakeTaskID, "status": f.status, "statusMessage": f.message,
		"pollInterval": 600000, "ttl": 60000, "createdAt": "2026-11-26T00:00:00Z", "lastUpdatedAt": "2026-11-26T00:00:00Z"}
}

// set moves the task and announces it; result is what tasks/result then
// answers.
func (f *taskBackend) set(status, message string, result *mcp.CallToolResult) {
	f.mu.Lock()
	f.status, f.message = status, message
	if result != nil {
		f.result, _ = json.Marshal(result)
	}
	if status == taskCompleted || status == taskFailed || status == taskCancelled {
		select {
		case <-f.over:
		default:
			close(f.over)
		}
	}
	conn := f.conn
	f.mu.Unlock()
	raw, _ := json.Marshal(f.task())
	_ = conn.Write(context.Background(), &jsonrpc.Request{Method: "notifications/tasks/status", Params: raw})
}

func (f *taskBackend) reply(req *jsonrpc.Request, result any, rpcErr *jsonrpc.Error) {
	resp := &jsonrpc.Response{ID: req.ID}
	if rpcErr != nil {
		resp.Error = rpcErr
	} else {
		resp.Result, _ = json.Marshal(result)
	}
	f.mu.Lock()
	conn := f.conn
	f.mu.Unlock()
	// An error means the gateway has gone (the test may have ended: no
	// t.Log here, see testLogger); its call fails on its own.
	_ = conn.Write(context.Background(), resp)
}

// startTaskBackend starts a manager with f and returns it with the
// progress messages the calls report.
func startTaskBackend(t *testing.T, f *taskBackend, timeout time.Duration) (*Manager, chan *mcp.ProgressNotificationParams) {
	progress := make(chan *mcp.ProgressNotificationParams, 100)
	m := startManager(t, Options{Specs: []Spec{f.spec(timeout)},
		OnProgress: func(_ string, p *mcp.ProgressNotificationParams) { progress <- p }})
	waitHealthy(t, m)
	return m, progress
}

// within returns what ch yields, failing the test after 20 s.
func within[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	timer := time.NewTimer(20 * time.Second)
	defer timer.Stop()
	select {
	case v := <-ch:
		return v
	case <-timer.C:
		t.Fatalf("gave up waiting for %s", what)
		panic("unreachable")
	}
}

type callOutcome struct {
	res *mcp.CallToolResult
	err error
}

func callAsync(ctx context.Context, m *Manager, tool string) <-chan callOutcome {
	out := make(chan callOutcome, 1)
	go func() {
		res, err := m.CallTool(ctx, "tasks", tool, map[string]any{"q": "x"})
		out <- callOutcome{res, err}
	}()
	return out
}

// TestTaskDrivenToCompletion: a plain call of a task-required tool creates
// a task (task-augmented tools/call, with a ttl and without the caller's
// progress token), reports each status message as progress numbered 1,
// 2, 3 under the caller's token, and answers with tasks/result once the
// task has completed. A tool with taskSupport optional is called plainly.
func TestTaskDrivenToCompletion(t *testing.T) {
	f := newTaskBackend(t)
	m, progress := startTaskBackend(t, f, 30*time.Second)

	done := callAsync(WithProgressToken(context.Background(), "tok"), m, "slow")
	params := within(t, f.calls, "the task-augmented tools/call")
	task, _ := params["task"].(map[string]any)
	meta, _ := params["_meta"].(map[string]any)
	if task == nil || task["ttl"] != float64(60000) || meta["progressToken"] != nil || params["name"] != "slow" {
		t.Fatalf("tools/call params: %v", params)
	}
	want := []string{"starting", "half way", "done"}
	check := func(i int) {
		t.Helper()
		p := within(t, progress, "progress "+want[i])
		if p.Message != want[i] || p.Progress != float64(i+1) || p.ProgressToken != "tok" {
			t.Fatalf("progress %d: %+v, want message %q", i, p, want[i])
		}
	}
	check(0)
	f.set(taskWorking, "half way", nil)
	check(1)
	f.set(taskCompleted, "done", textResult("the answer"))
	out := within(t, done, "the call's result")
	if out.err != nil || out.res.IsError || resultText(t, out.res) != "the answer" {
		t.Fatalf("result %+v, error %v", out.res, out.err)
	}
	check(2)

	res, err := m.CallTool(context.Background(), "tasks", "plain", nil)
	if err != nil || resultText(t, res) != "plain plain" {
		t.Fatalf("plain: %v, %v", res, err)
	}
	if params := within(t, f.calls, "the plain tools/call"); params["task"] != nil {
		t.Fatalf("an optional tool was called as a task: %v", params)
	}
}

// TestTaskCancelledWhenCallerGoes: the caller cancelling its call (a
// client's notifications/cancelled, a program's end) and the call's
// timeout both send tasks/cancel for the backend's task.
func TestTaskCancelledWhenCallerGoes(t *testing.T) {
	t.Run("caller cancels", func(t *testing.T) {
		f := newTaskBackend(t)
		m, progress := startTaskBackend(t, f, 30*time.Second)
		ctx, cancel := context.WithCancel(WithProgressToken(context.Background(), "tok"))
		defer cancel()
		done := callAsync(ctx, m, "slow")
		within(t, progress, "the task to be created")
		cancel()
		if id := within(t, f.cancels, "tasks/cancel"); id != fakeTaskID {
			t.Fatalf("tasks/cancel for %q", id)
		}
		if out := within(t, done, "the call's end"); !errors.Is(out.err, context.Canceled) {
			t.Fatalf("call: %+v", out)
		}
	})
	t.Run("timeout", func(t *testing.T) {
		f := newTaskBackend(t)
		m, _ := startTaskBackend(t, f, 500*time.Millisecond)
		done := callAsync(context.Background(), m, "slow")
		if id := within(t, f.cancels, "tasks/cancel"); id != fakeTaskID {
			t.Fatalf("tasks/cancel for %q", id)
		}
		if out := within(t, done, "the call's end"); !errors.Is(out.err, ErrTimeout) {
			t.Fatalf("call: %+v", out)
		}
	})
}

// TestTaskNotCompleted: a failed task whose tasks/result is an error, and
// a task the backend cancels, are error results carrying the status
// message.
func TestTaskNotCompleted(t *testing.T) {
	for _, tc := range []struct{ status, message, want string }{
		{taskFailed, "boom", "boom"},
		{taskCancelled, "shutting down", "the backend cancelled the task: shutting down"},
	} {
		t.Run(tc.status, func(t *testing.T) {
			f := newTaskBackend(t)
			m, progress := startTaskBackend(t, f, 30*time.Second)
			done := callAsync(WithProgressToken(context.Background(), "tok"), m, "slow")
			within(t, progress, "the task to be created")
			f.set(tc.status, tc.message, nil)
			out := within(t, done, "the call's result")
			if out.err != nil || !out.res.IsError || !strings.Contains(resultText(t, out.res), tc.want) {
				t.Fatalf("result %+v, error %v", out.res, out.err)
			}
		})
	}
}

// TestTaskInputRequiredReadsResult: a task that stops for input is
// reported as such, and the gateway asks for tasks/result (where the
// backend's requests of the task travel, see callAsTask), whose answer,
// once the task completes, is the call's result.
func TestTaskInputRequiredReadsResult(t *testing.T) {
	f := newTaskBackend(t)
	m, progress := startTaskBackend(t, f, 30*time.Second)
	done := callAsync(WithProgressToken(context.Background(), "tok"), m, "slow")
	within(t, progress, "the task to be created")
	f.set(taskInputRequired, "which one?", nil)
	if p := within(t, progress, "the input_required status"); p.Message != "input required: which one?" {
		t.Fatalf("progress %+v", p)
	}
	if st := within(t, f.resultAsks, "tasks/result"); st != taskInputRequired {
		t.Fatalf("tasks/result asked in status %q", st)
	}
	f.set(taskCompleted, "done", textResult("answered"))
	if out := within(t, done, "the call's result"); out.err != nil || resultText(t, out.res) != "answered" {
		t.Fatalf("result %+v, error %v", out.res, out.err)
	}
}

// TestTaskCreationNotRetriedWhenConnectionDrops: a connection that ends
// after the task-augmented tools/call was sent may have created the task:
// the call fails as a lost connection and is not made again on the next
// connection (a retry would succeed here: the backend drops only the
// first).
func TestTaskCreationNotRetriedWhenConnectionDrops(t *testing.T) {
	f := newTaskBackend(t)
	f.drop = true
	m, _ := startTaskBackend(t, f, 30*time.Second)
	f.set(taskCompleted, "done", textResult("the answer"))
	res, err := m.CallTool(context.Background(), "tasks", "slow", nil)
	if !errors.Is(err, ErrConnectionLost) {
		t.Fatalf("call: %v, %v", res, err)
	}
}
