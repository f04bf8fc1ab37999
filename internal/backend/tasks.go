package backend

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// How the gateway polls a task it drives (see callAsTask): at the
// backend's pollInterval, kept within these bounds, or at taskPollDefault
// when the backend suggests none. A notifications/tasks/status from the
// backend polls at once.
const (
	taskPollDefault = time.Second
	taskPollFloor   = 100 * time.Millisecond
	taskPollCeiling = 5 * time.Second
	// taskCancelTimeout bounds sending tasks/cancel (or
	// notifications/cancelled) once the caller has gone.
	taskCancelTimeout = 5 * time.Second
)

// TaskSupportRequired is a tool's `execution.taskSupport` when it can only
// be called as a task (MCP 2025-11-25): the gateway drives such a call as a
// task itself (callAsTask).
const TaskSupportRequired = "required"

// relatedTaskKey is the _meta key tying a message to a task (MCP
// 2025-11-25): a backend's tasks/result carries its own task's id there.
const relatedTaskKey = "io.modelcontextprotocol/related-task"

// Task statuses (MCP 2025-11-25, tasks utility).
const (
	taskWorking       = "working"
	taskInputRequired = "input_required"
	taskCompleted     = "completed"
	taskFailed        = "failed"
	taskCancelled     = "cancelled"
)

// backendTask is a task as a backend describes it (CreateTaskResult.task,
// GetTaskResult).
type backendTask struct {
	TaskID        string `json:"taskId"`
	Status        string `json:"status"`
	StatusMessage string `json:"statusMessage,omitempty"`
	PollInterval  *int64 `json:"pollInterval,omitempty"` // milliseconds
}

func (t *backendTask) terminal() bool {
	return t.Status == taskCompleted || t.Status == taskFailed || t.Status == taskCancelled
}

// pollEvery is how long to wait before the next tasks/get.
func (t *backendTask) pollEvery() time.Duration {
	if t.PollInterval == nil {
		return taskPollDefault
	}
	return min(max(time.Duration(*t.PollInterval)*time.Millisecond, taskPollFloor), taskPollCeiling)
}

// noteTaskSupport records the `execution.taskSupport` of the tools of one
// raw tools/list page (the go-sdk's Tool has no such field and drops it).
func (b *backend) noteTaskSupport(support map[string]string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.taskSupport == nil {
		b.taskSupport = map[string]string{}
	}
	for name, s := range support {
		if s == "" {
			delete(b.taskSupport, name)
		} else {
			b.taskSupport[name] = s
		}
	}
}

// taskRequired reports whether tool must be called as a task.
func (b *backend) taskRequired(tool string) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.taskSupport[tool] == TaskSupportRequired
}

// taskSupportOf returns the `execution.taskSupport` of a raw tool ("" when
// absent or not a string).
func taskSupportOf(item json.RawMessage) string {
	var t struct {
		Execution struct {
			TaskSupport string `json:"taskSupport"`
		} `json:"execution"`
	}
	_ = json.Unmarshal(item, &t)
	return t.Execution.TaskSupport
}

// send performs one call on c: plainly, or, when the tool requires a task
// and the connection can carry the gateway's own requests, as a task the
// gateway drives (callAsTask).
func (b *backend) send(ctx context.Context, c *conn, p *mcp.CallToolParams) (*mcp.CallToolResult, error) {
	if c.tasks != nil && b.taskRequired(p.Name) {
		return b.callAsTask(ctx, c, p)
	}
	return c.sess.CallTool(ctx, p)
}

// callAsTask calls a task-required tool for a caller that made a plain
// call: it creates the task with a task-augmented tools/call, polls
// tasks/get (each status message becomes a progress notification with the
// call's progress token), and answers with tasks/result once the task is
// over, or has stopped for input (tasks/result is where the backend's
// requests of an input_required task travel; they take the client-request
// path of any call). A failed or cancelled task is an error result. When
// ctx ends first, the task is cancelled on the backend (tasks/cancel).
//
// The call's progress token is not sent to the backend: the progress the
// caller receives is the task's status, numbered here, so that it
// increases as the spec requires.
func (b *backend) callAsTask(ctx context.Context, c *conn, p *mcp.CallToolParams) (*mcp.CallToolResult, error) {
	token := p.Meta["progressToken"]
	params, err := taskCallParams(p, b.spec.Timeout)
	if err != nil {
		return nil, err
	}
	raw, err := c.tasks.request(ctx, "tools/call", params)
	if err != nil {
		return nil, err
	}
	var created struct {
		Task *backendTask `json:"task"`
	}
	if err := json.Unmarshal(raw, &created); err != nil {
		return nil, fmt.Errorf("decoding the task-augmented tools/call result: %w", err)
	}
	if created.Task == nil || created.Task.TaskID == "" {
		return decodeCallResult(raw) // the backend answered without a task
	}
	task := created.Task
	log := b.log.With(slog.String("tool", p.Name), slog.String("task", task.TaskID))
	log.Debug("backend task created", slog.String("status", task.Status))
	status, stop := c.tasks.watch(task.TaskID)
	defer stop()
	report := b.taskReporter(token)
	report(task)
	for !task.terminal() && task.Status != taskInputRequired {
		timer := time.NewTimer(task.pollEvery())
		select {
		case <-timer.C:
		case <-status:
			timer.Stop()
		case <-ctx.Done():
			timer.Stop()
			b.cancelTask(c, task.TaskID, log)
			return nil, ctx.Err()
		}
		raw, err := c.tasks.request(ctx, "tasks/get", map[string]string{"taskId": task.TaskID})
		if err != nil {
			if ctx.Err() != nil {
				b.cancelTask(c, task.TaskID, log)
			}
			return nil, err
		}
		next := *task
		next.StatusMessage = "" // a status without a message has none
		if err := json.Unmarshal(raw, &next); err != nil {
			return nil, fmt.Errorf("decoding the tasks/get result: %w", err)
		}
		task = &next
		report(task)
	}
	log.Debug("backend task stopped polling", slog.String("status", task.Status))
	if task.Status == taskCancelled {
		return taskErrorResult(task, "the backend cancelled the task"), nil
	}
	raw, err = c.tasks.request(ctx, "tasks/result", map[string]string{"taskId": task.TaskID})
	if err != nil {
		if ctx.Err() != nil {
			b.cancelTask(c, task.TaskID, log)
			return nil, err
		}
		if task.Status == taskFailed && errorCode(err) != 0 {
			return taskErrorResult(task, err.Error()), nil
		}
		return nil, err
	}
	res, err := decodeCallResult(raw)
	if err != nil {
		return nil, err
	}
	// The task is the gateway's, made for a plain call: its id means
	// nothing to the caller (whose tasks/get does not know it).
	delete(res.Meta, relatedTaskKey)
	if len(res.Meta) == 0 {
		res.Meta = nil
	}
	if task.Status == taskFailed {
		res.IsError = true
	}
	return res, nil
}

// taskCallParams returns p as the params of a task-augmented tools/call:
// without the progress token (see callAsTask) and with `task.ttl` long
// enough for the call's timeout and the reading of its result.
func taskCallParams(p *mcp.CallToolParams, timeout time.Duration) (map[string]any, error) {
	q := *p
	q.Meta = cloneMeta(p.Meta)
	delete(q.Meta, "progressToken")
	if len(q.Meta) == 0 {
		q.Meta = nil
	}
	raw, err := json.Marshal(&q)
	if err != nil {
		return nil, fmt.Errorf("encoding the call: %w", err)
	}
	var params map[string]any
	if err := json.Unmarshal(raw, &params); err != nil {
		return nil, fmt.Errorf("encoding the call: %w", err)
	}
	params["task"] = map[string]any{"ttl": (2 * timeout).Milliseconds()}
	return params, nil
}

// decodeCallResult decodes a raw tools/call (or tasks/result) result.
func decodeCallResult(raw json.RawMessage) (*mcp.CallToolResult, error) {
	var res mcp.CallToolResult
	if err := json.Unmarshal(raw, &res); err != nil {
		return nil, fmt.Errorf("decoding the tool result: %w", err)
	}
	return &res, nil
}

// taskErrorResult is the error result of a task that did not complete.
func taskErrorResult(task *backendTask, why string) *mcp.CallToolResult {
	text := why
	if task.StatusMessage != "" {
		text += ": " + task.StatusMessage
	}
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: text}}}
}

// taskReporter returns the function that turns a task's status into a
// progress notification for the call's token (none without a token),
// each time the status or its message changes.
func (b *backend) taskReporter(token any) func(*backendTask) {
	var seq float64
	var last string
	return func(t *backendTask) {
		f := b.opts.OnProgress
		if token == nil || f == nil {
			return
		}
		msg := t.StatusMessage
		if msg == "" {
			msg = t.Status
		}
		if t.Status == taskInputRequired {
			msg = "input required: " + msg
		}
		if seq > 0 && msg == last {
			return
		}
		seq++
		last = msg
		f(b.spec.Name, &mcp.ProgressNotificationParams{ProgressToken: token, Progress: seq, Message: msg})
	}
}

// cancelTask asks the backend to cancel a task whose caller has gone, in
// the background, if the backend declares tasks/cancel.
func (b *backend) cancelTask(c *conn, taskID string, log *slog.Logger) {
	if !c.tasks.capabilities().Cancel {
		log.Debug("the caller gave up; the backend cannot cancel its task")
		return
	}
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), taskCancelTimeout)
		defer cancel()
		raw, err := c.tasks.request(ctx, "tasks/cancel", map[string]string{"taskId": taskID})
		if err != nil {
			log.Debug("cancelling the backend task failed", slog.Any("error", err))
			return
		}
		var task backendTask
		_ = json.Unmarshal(raw, &task)
		log.Debug("backend task cancelled: its caller gave up", slog.String("status", task.Status))
	}()
}

// TaskSupport returns the `execution.taskSupport` a backend lists for one
// of its tools ("" when it lists none, or the backend is unknown).
func (m *Manager) TaskSupport(backendName, tool string) string {
	b := m.current().backends[backendName]
	if b == nil {
		return ""
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.taskSupport[tool]
}
