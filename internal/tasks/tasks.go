package tasks

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/isogate/isogate/internal/resultstore"
)

// Gateway-owned tasks (MCP 2025-11-25, tasks utility): a client may send
// any tools/call isogate serves with `params.task = {ttl}`; the gateway
// answers a CreateTaskResult at once and runs the call in the background,
// through the same middleware and handlers as a plain call (policy,
// approvals, attribution, audit), with a context detached from the request
// and bounded by the task's TTL. The go-sdk knows nothing of tasks (it
// drops `params.task` and answers tasks/* "method not found"), so the
// JSON-RPC boundary (taskwire.go) registers a task intent under an
// unguessable token it puts in the call's `_meta`, and answers tasks/*
// itself from the task store, on any replica sharing it.

// taskMetaKey carries the token of a task intent in a tools/call's _meta,
// from the JSON-RPC boundary to Middleware.
const taskMetaKey = "isogate/task"

// relatedTaskKey is the _meta key tying a message to a task (2025-11-25).
const relatedTaskKey = "io.modelcontextprotocol/related-task"

// taskPollInterval is the pollInterval isogate suggests to clients, and
// how often a replica looks for a cancel or an end made elsewhere.
const taskPollInterval = 500 * time.Millisecond

// codeTooManyTasks is the isogate/code of a task refused because its
// principal has server.tasks.max_per_principal tasks in progress.
const codeTooManyTasks = "TOO_MANY_TASKS"

// Options bound the tasks clients create (server.tasks).
type Options struct {
	// Store keeps task state; nil: in memory.
	Store resultstore.TaskStore
	// MaxTTL clamps a task's ttl, and is the ttl of a task that asks for
	// none (server.tasks.max_ttl).
	MaxTTL time.Duration
	// MaxPerPrincipal bounds a principal's live tasks
	// (server.tasks.max_per_principal).
	MaxPerPrincipal int
	// Leases hold the tasks a replica runs, for another one to take them
	// over when it dies (leases.go); nil: tasks are not leased (one
	// replica, task state in memory).
	Leases resultstore.Leases
	// LeaseTTL is how long a lease lasts without a heartbeat
	// (store.lease_ttl).
	LeaseTTL time.Duration
}

// taskIntent is a task-augmented tools/call as the boundary saw it.
type taskIntent struct {
	owner  string
	ttl    time.Duration  // as asked; 0: none asked
	notify func(wireTask) // sends notifications/tasks/status; nil: cannot
	modern bool           // a 2026-07-28 call: answered on that era's wire (taskext.go)
}

// Tasks are the tasks of one surface: the task-augmented calls it runs in
// the background, tasks/* answered, their leases and takeovers.
type Tasks struct {
	host    Host
	store   resultstore.TaskStore
	results resultstore.Store
	opts    Options

	intents intentTable // token → *taskIntent or *resultIntent
	running sync.Map    // task id → *runningTask
	tokens  sync.Map    // progress token → *runningTask
	hooks   taskHooks   // a test's (tasklife.go)
	// stopping is set by Stop: this replica is shutting down.
	stopping atomic.Bool
}

// Stop tells the tasks that this replica is shutting down (before its
// backends and sandbox close): a leased task whose run fails from then on
// keeps no outcome, as the failure is most likely the shutdown's (a
// backend call ended by BACKEND_CLOSED), and its lease lapses so that
// another replica takes it over as it would after a crash (by replay with
// sandbox.durable: all, else REPLICA_LOST). A run that succeeds still
// keeps its outcome.
func (g *Tasks) Stop() { g.stopping.Store(true) }

// runningTask is a task this replica runs.
type runningTask struct {
	gt     *Tasks
	cancel context.CancelCauseFunc
	done   chan struct{}
	notify func(wireTask)
	lease  *taskLease // nil: not leased

	mu   sync.Mutex
	task resultstore.Task
	// A 2026-07-28 task waiting for input (taskinput.go): the requests
	// not answered yet, the answers so far, closed when all are in.
	pending  map[string]json.RawMessage
	answers  map[string]json.RawMessage
	answered chan struct{}
	// A 2025-11-25 task's elicitations waiting for a tasks/result to send
	// them (taskelicit.go), and a channel closed when one is added.
	asks    []*taskAsk
	askPoke chan struct{}
}

// New returns the tasks of a surface: host is what they need of it, results
// keeps their outcomes, opts bound them.
func New(host Host, results resultstore.Store, opts Options) *Tasks {
	if opts.Store == nil {
		opts.Store = resultstore.NewMemoryTasks(nil)
	}
	return &Tasks{host: host, store: opts.Store, results: results, opts: opts}
}

// maxTaskIntents bounds the intents pending at once: task-augmented
// tools/call and tasks/result requests between the boundary that read
// them and the middleware that takes them (tasks.go, taskelicit.go).
const maxTaskIntents = 10000

// codeTasksBusy is the isogate/code of a task request refused because
// maxTaskIntents intents are pending (retryable).
const codeTasksBusy = "TASKS_BUSY"

// errTooManyIntents refuses an intent past maxTaskIntents.
var errTooManyIntents = fmt.Errorf("%s: %d task requests are in flight on this gateway; retry shortly", codeTasksBusy, maxTaskIntents)

// intentTable holds the intents of requests in flight, each from the
// boundary that read its request until the middleware takes it or the
// request ends (whatever the outcome: a request the go-sdk refused before
// any middleware leaves nothing behind), at most maxTaskIntents at once.
type intentTable struct {
	mu sync.Mutex
	m  map[string]any
}

// add files an intent and returns its token; past maxTaskIntents it
// refuses with errTooManyIntents.
func (t *intentTable) add(in any) (string, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.m) >= maxTaskIntents {
		return "", errTooManyIntents
	}
	if t.m == nil {
		t.m = map[string]any{}
	}
	token := newIntentToken()
	t.m[token] = in
	return token, nil
}

// take removes the intent of token and returns it.
func (t *intentTable) take(token string) (any, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	in, ok := t.m[token]
	delete(t.m, token)
	return in, ok
}

// drop forgets the intent of token, if still there (its request ended).
func (t *intentTable) drop(token string) {
	if token == "" {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.m, token)
}

// len is the number of intents pending.
func (t *intentTable) len() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.m)
}

// Intents is the number of task intents pending: task requests read
// by the boundary whose call has not started yet (isogate_task_intents).
func (g *Tasks) Intents() int { return g.intents.len() }

// errTasksBusy is errTooManyIntents as a JSON-RPC error.
func errTasksBusy() *jsonrpc.Error {
	data, _ := json.Marshal(map[string]string{"isogate/code": codeTasksBusy})
	return &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Data: data, Message: errTooManyIntents.Error()}
}

// newIntentToken is an unguessable token for an intent of the boundary's.
func newIntentToken() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return "isogate-task-" + hex.EncodeToString(b)
}

// newTaskID is an unguessable task id (128 random bits).
func newTaskID() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// wireTask is a task as MCP sends it (Task).
type wireTask struct {
	TaskID        string `json:"taskId"`
	Status        string `json:"status"`
	StatusMessage string `json:"statusMessage,omitempty"`
	CreatedAt     string `json:"createdAt"`
	LastUpdatedAt string `json:"lastUpdatedAt"`
	TTL           int64  `json:"ttl"`
	PollInterval  int64  `json:"pollInterval,omitempty"`
}

func toWire(t *resultstore.Task) wireTask {
	return wireTask{TaskID: t.ID, Status: t.Status, StatusMessage: t.StatusMessage,
		CreatedAt: t.CreatedAt.UTC().Format(time.RFC3339Nano), LastUpdatedAt: t.UpdatedAt.UTC().Format(time.RFC3339Nano),
		TTL: t.TTL.Milliseconds(), PollInterval: taskPollInterval.Milliseconds()}
}

// taskOutcome is what a task's call ended with, kept in the result store.
type taskOutcome struct {
	Result json.RawMessage `json:"result,omitempty"`
	Error  *jsonrpc.Error  `json:"error,omitempty"`
}

// createTaskResult answers a task-augmented tools/call (CreateTaskResult).
// It embeds a CallToolResult only to be an mcp.Result for the go-sdk.
type createTaskResult struct {
	*mcp.CallToolResult
	task   wireTask
	modern *modernTask // 2026-07-28: the flat CreateTaskResult instead
}

// MarshalJSON implements json.Marshaler.
func (r createTaskResult) MarshalJSON() ([]byte, error) {
	if r.modern != nil {
		return json.Marshal(r.modern)
	}
	return json.Marshal(struct {
		Task wireTask `json:"task"`
	}{r.task})
}

// Middleware runs a tools/call that carries a task intent's token as a
// task: it creates the task, starts the rest of the chain in the
// background and answers the CreateTaskResult at once.
func (g *Tasks) Middleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		call, ok := req.(*mcp.CallToolRequest)
		if method != "tools/call" || !ok || call.Params == nil || call.Params.Meta[taskMetaKey] == nil {
			return next(ctx, method, req)
		}
		token, _ := call.Params.Meta[taskMetaKey].(string)
		delete(call.Params.Meta, taskMetaKey)
		v, _ := g.intents.take(token)
		in, found := v.(*taskIntent)
		if !found {
			// Not put there by the boundary, or its request ended before
			// the call reached here: nobody waits for a task, and the
			// call is not run as a plain one either.
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest,
				Message: "the task's request ended before its call started (or " + taskMetaKey + " was not the gateway's)"}
		}
		return g.start(ctx, in, call, func(ctx context.Context, r mcp.Request) (mcp.Result, error) {
			return next(ctx, method, r)
		})
	}
}

// start creates the task of call and runs it with run in the background.
func (g *Tasks) start(ctx context.Context, in *taskIntent, call *mcp.CallToolRequest,
	run func(context.Context, mcp.Request) (mcp.Result, error)) (mcp.Result, error) {
	ttl := in.ttl
	if ttl <= 0 || ttl > g.opts.MaxTTL {
		ttl = g.opts.MaxTTL
	}
	now := time.Now()
	t := resultstore.Task{ID: newTaskID(), Owner: in.owner, Status: resultstore.TaskWorking,
		CreatedAt: now, UpdatedAt: now, TTL: ttl, Deadline: g.deadline(now, in, call)}
	journalled := g.journalled(call)
	lease := g.hold(ctx, &t, call.Params.Name, journalled) // before the task exists: never unleased
	if err := g.store.Create(ctx, &t, g.opts.MaxPerPrincipal); err != nil {
		lease.release()
		if errors.Is(err, resultstore.ErrTooManyTasks) {
			data, _ := json.Marshal(map[string]string{"isogate/code": codeTooManyTasks})
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Data: data,
				Message: fmt.Sprintf("%v: wait for one to finish, or cancel one (server.tasks.max_per_principal)", err)}
		}
		return nil, fmt.Errorf("creating the task: %w", err)
	}
	// Detached from the request (its answer is the CreateTaskResult), kept
	// within the task's TTL; values (principal, caller) stay.
	tctx, cancelTTL := context.WithTimeout(context.WithoutCancel(ctx), ttl)
	tctx, cancel := context.WithCancelCause(tctx)
	tctx = lease.withFence(tctx, cancel) // no backend call for a task taken over
	rt := &runningTask{gt: g, cancel: cancel, done: make(chan struct{}), notify: in.notify, task: t, lease: lease}
	if !in.modern { // its elicitations wait for tasks/result (taskelicit.go)
		tctx = context.WithValue(tctx, taskRunKey{}, rt)
	}
	g.running.Store(t.ID, rt)
	progress := "isogate-task-progress-" + t.ID
	g.tokens.Store(progress, rt)
	bg := taskRequest(call, progress)
	var durable *Durable
	if journalled {
		if durable = g.durableTask(call, &t, cancel); durable != nil {
			tctx = WithDurable(tctx, durable)
		}
	}
	go func() {
		defer cancelTTL()
		defer cancel(nil)
		stopBeat := lease.heartbeat(tctx, cancel)
		stop := g.watchCancel(tctx, rt)
		var res mcp.Result
		err := errLeaseLost
		if !g.killedAt(StepCreated, t.ID, cancel) {
			res, err = run(tctx, bg)
			if in.modern {
				res, err = rt.inputRounds(tctx, bg, res, err, run)
			}
		}
		g.killedAt(StepRunEnded, t.ID, cancel)
		stop()
		stopBeat()
		g.tokens.Delete(progress)
		rt.finish(res, err, lease.outcomeCause(tctx, context.Cause(tctx)))
		if !g.killedAt(StepOutcomeKept, t.ID, cancel) {
			g.endLeased(lease, durable, &t)
		}
		g.running.Delete(t.ID)
		close(rt.done)
	}()
	g.host.Logger.Debug("task created", slog.String("task", t.ID), slog.String("tool", call.Params.Name),
		slog.Duration("ttl", ttl))
	created := createTaskResult{CallToolResult: &mcp.CallToolResult{}, task: toWire(&t)}
	if in.modern {
		m := toModern(&t, "task")
		created.modern = &m
	}
	return created, nil
}

// taskRequest is call as the background run sees it: with the task's own
// progress token (its progress becomes the status message) and no tie to
// the HTTP request that carried it (see httpRequests.bind).
func taskRequest(call *mcp.CallToolRequest, progress string) *mcp.CallToolRequest {
	params := *call.Params
	params.Meta = mcp.Meta{}
	for k, v := range call.Params.Meta {
		params.Meta[k] = v
	}
	params.Meta["progressToken"] = progress
	bg := &mcp.CallToolRequest{Session: call.Session, Params: &params}
	if call.Extra != nil {
		extra := *call.Extra
		if extra.Header != nil {
			extra.Header = extra.Header.Clone()
			extra.Header.Del(RequestKeyHeader)
		}
		bg.Extra = &extra
	}
	return bg
}

// watchCancel cancels rt when its task is cancelled through another
// replica (the shared store says cancelled), until stop.
func (g *Tasks) watchCancel(ctx context.Context, rt *runningTask) (stop func()) {
	if _, local := g.store.(*resultstore.MemoryTasks); local {
		return func() {}
	}
	ctx, cancel := context.WithCancel(ctx)
	go func() {
		tick := time.NewTicker(taskPollInterval)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			t, err := g.store.Get(ctx, rt.task.Owner, rt.task.ID)
			if err == nil && t.Status == resultstore.TaskCancelled {
				rt.cancel(errTaskCancelled)
				return
			}
		}
	}()
	return cancel
}

// errTaskCancelled is the cause of a task's context when tasks/cancel
// ended it.
var errTaskCancelled = errors.New("the task was cancelled (tasks/cancel)")

// setStatus writes the task's new status message (from the run's
// progress) and tells the client.
func (rt *runningTask) setStatus(message string) {
	if !rt.lease.held() { // a status is not worth a round trip: dropped
		return
	}
	rt.mu.Lock()
	if rt.task.Terminal() {
		rt.mu.Unlock()
		return
	}
	rt.task.StatusMessage = message
	rt.task.UpdatedAt = time.Now()
	t := rt.task
	rt.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), SendTimeout)
	defer cancel()
	if err := rt.gt.store.Update(ctx, &t); err != nil {
		return // cancelled or gone meanwhile
	}
	rt.tell(&t)
}

// tell sends notifications/tasks/status when the client can receive it.
func (rt *runningTask) tell(t *resultstore.Task) {
	if rt.notify != nil {
		rt.notify(toWire(t))
	}
}

// finish keeps the outcome of the task's call and moves it to its
// terminal status: completed, failed (a JSON-RPC error, or a tool error
// result), or cancelled (its context was cancelled by tasks/cancel; the
// store says so already).
func (rt *runningTask) finish(res mcp.Result, err error, cause error) {
	g := rt.gt
	ctx, cancel := context.WithTimeout(context.Background(), SendTimeout)
	defer cancel()
	rt.mu.Lock()
	t := rt.task
	rt.mu.Unlock()
	log := g.host.Logger.With(slog.String("task", t.ID))
	if errors.Is(cause, errTaskCancelled) {
		log.Debug("task cancelled")
		return
	}
	if errors.Is(cause, errLeaseLost) { // another replica continues it
		return
	}
	var out taskOutcome
	status, message := resultstore.TaskCompleted, ""
	if err == nil {
		raw, merr := json.Marshal(res)
		if merr != nil {
			err = merr
		} else {
			out.Result = raw
			if cr, ok := res.(*mcp.CallToolResult); ok && cr.IsError {
				status, message = resultstore.TaskFailed, firstText(cr)
			}
		}
	}
	if err != nil {
		var coded *jsonrpc.Error
		if !errors.As(WireError(err), &coded) {
			coded = &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: err.Error()}
		}
		if cause != nil {
			coded = &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "the task ended: " + cause.Error()}
		}
		out.Error = coded
		status, message = resultstore.TaskFailed, coded.Message
	}
	if status == resultstore.TaskFailed && rt.lease != nil && g.stopping.Load() {
		log.Info("task left to another replica: this replica is stopping and the task's run failed meanwhile",
			slog.String("status_message", cut(message, 200)))
		return
	}
	data, _ := json.Marshal(out)
	id, perr := g.results.Put(ctx, t.Owner, data)
	if perr != nil {
		status, message = resultstore.TaskFailed, "keeping the task's result: "+perr.Error()
	}
	t.ResultID, t.Status, t.StatusMessage, t.UpdatedAt = id, status, cut(message, 500), time.Now()
	if err := rt.keep(ctx, &t); err != nil {
		log.Debug("task outcome not kept", slog.Any("error", err))
		return
	}
	rt.mu.Lock()
	rt.task = t
	rt.mu.Unlock()
	log.Debug("task over", slog.String("status", status))
	rt.tell(&t)
}

// keep writes the task's outcome: a leased task's only while this
// replica holds its lease, checked in the same step as the write where the
// store can (a replica frozen between its fence and this write keeps
// nothing over the taker's outcome).
func (rt *runningTask) keep(ctx context.Context, t *resultstore.Task) error {
	if held, ok := rt.gt.store.(resultstore.HeldTaskStore); ok && rt.lease != nil {
		return held.UpdateHeld(ctx, t, rt.lease.holder)
	}
	return rt.gt.store.Update(ctx, t)
}

// firstText is the first text content of a result.
func firstText(r *mcp.CallToolResult) string {
	for _, c := range r.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			return tc.Text
		}
	}
	return ""
}

func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// Progress is a sending middleware: a progress notification for a
// task's own token becomes the task's status message (and
// notifications/tasks/status where the client can receive it) instead of
// going out.
func (g *Tasks) Progress(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if method == "notifications/progress" {
			if p, ok := req.GetParams().(*mcp.ProgressNotificationParams); ok {
				if tok, ok := p.ProgressToken.(string); ok {
					if v, ok := g.tokens.Load(tok); ok {
						v.(*runningTask).setStatus(p.Message)
						return nil, nil
					}
				}
			}
		}
		return next(ctx, method, req)
	}
}

// errTaskNotFound answers an unknown, expired or foreign task id alike.
func errTaskNotFound() *jsonrpc.Error {
	return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "Failed to retrieve task: Task not found"}
}

// taskParams are the params of tasks/get, tasks/result, tasks/cancel.
type taskParams struct {
	TaskID string `json:"taskId"`
}

// answer serves one tasks/* request of owner; ok is false for a method
// that is not one of them.
func (g *Tasks) answer(ctx context.Context, owner, method string, params json.RawMessage) (result any, err error, ok bool) {
	var p taskParams
	if method != "tasks/list" {
		if json.Unmarshal(params, &p) != nil || p.TaskID == "" {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: method + ": params.taskId is required"}, true
		}
	}
	switch method {
	case "tasks/get":
		t, err := g.store.Get(ctx, owner, p.TaskID)
		if err != nil {
			return nil, storeError(err), true
		}
		return toWire(g.expire(ctx, t)), nil, true
	case "tasks/result":
		r, err := g.result(ctx, owner, p.TaskID, nil)
		return r, err, true
	case "tasks/list":
		ts, err := g.store.List(ctx, owner)
		if err != nil {
			return nil, storeError(err), true
		}
		out := struct {
			Tasks []wireTask `json:"tasks"`
		}{Tasks: []wireTask{}}
		for _, t := range ts {
			out.Tasks = append(out.Tasks, toWire(g.expire(ctx, t)))
		}
		return out, nil, true
	case "tasks/cancel":
		t, err := g.cancel(ctx, owner, p.TaskID)
		if errors.Is(err, resultstore.ErrTaskTerminal) {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams,
				Message: fmt.Sprintf("Cannot cancel task: already %s", t.Status)}, true
		}
		if err != nil {
			return nil, storeError(err), true
		}
		return toWire(t), nil, true
	}
	return nil, nil, false
}

// cancel moves owner's task id to cancelled and stops its run when this
// replica runs it (another replica's watchCancel stops it there).
func (g *Tasks) cancel(ctx context.Context, owner, id string) (*resultstore.Task, error) {
	t, err := g.store.Cancel(ctx, owner, id, "cancelled by the client")
	if err != nil {
		return t, err
	}
	if v, ok := g.running.Load(id); ok {
		rt := v.(*runningTask)
		rt.mu.Lock()
		rt.task = *t
		rt.mu.Unlock()
		rt.cancel(errTaskCancelled)
		rt.tell(t)
	}
	return t, nil
}

// storeError maps a task store failure to a JSON-RPC error.
func storeError(err error) error {
	if errors.Is(err, resultstore.ErrNotFound) {
		return errTaskNotFound()
	}
	return &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: err.Error()}
}

// result waits for owner's task id to be over and returns its call's
// result (or error), tied to the task by _meta. With ss, while the task
// runs on this replica, its run's elicitations are sent to the client of
// ss and their answers handed back (taskelicit.go); nil: it only waits.
func (g *Tasks) result(ctx context.Context, owner, id string, ss *mcp.ServerSession) (any, error) {
	for {
		t, err := g.store.Get(ctx, owner, id)
		if err != nil {
			return nil, storeError(err)
		}
		if t = g.expire(ctx, t); t.Terminal() {
			return g.outcome(ctx, t)
		}
		var done, asked <-chan struct{}
		if v, ok := g.running.Load(id); ok {
			rt := v.(*runningTask)
			done = rt.done
			if ss != nil {
				asked = rt.sendAsks(ctx, ss)
			}
		}
		tick := time.NewTimer(taskPollInterval)
		select {
		case <-ctx.Done():
			tick.Stop()
			return nil, ctx.Err()
		case <-done:
			tick.Stop()
		case <-asked:
			tick.Stop()
		case <-tick.C:
		}
	}
}

// outcome reads a terminal task's result.
func (g *Tasks) outcome(ctx context.Context, t *resultstore.Task) (any, error) {
	if t.ResultID == "" { // cancelled before it ended
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "Task " + t.Status + ": it has no result"}
	}
	data, err := g.results.Get(ctx, t.Owner, t.ResultID)
	if err != nil {
		return nil, storeError(err)
	}
	var out taskOutcome
	if err := json.Unmarshal(data, &out); err != nil {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "decoding the task's result: " + err.Error()}
	}
	if out.Error != nil {
		return nil, out.Error
	}
	var res map[string]any
	if err := json.Unmarshal(out.Result, &res); err != nil || res == nil {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "decoding the task's result"}
	}
	meta, _ := res["_meta"].(map[string]any)
	if meta == nil {
		meta = map[string]any{}
	}
	meta[relatedTaskKey] = map[string]string{"taskId": t.ID}
	res["_meta"] = meta
	return res, nil
}
