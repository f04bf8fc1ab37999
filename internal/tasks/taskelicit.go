package tasks

import (
	"context"
	"encoding/json"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/isogate/isogate/internal/resultstore"
)

// Input inside a 2025-11-25 task (tasks utility, "Input Required"): a
// call run as a task that needs the client's input (an approval of
// call_tool_chain or of a passthrough call, a backend's elicitation) asks
// with elicitation/create, as a plain call would. Run as a task, that
// request has no request of the client's to travel on (the task-augmented
// tools/call was answered at once), so it is held: the task goes
// input_required, and the client's tasks/result (which it calls on seeing
// input_required) is where the request is sent, tied to the task by
// _meta["io.modelcontextprotocol/related-task"]. Its answer goes back to
// the run, the task is working again, and tasks/result goes on waiting for
// the outcome.
//
// So that the go-sdk carries those requests and their answers on the
// tasks/result request's own stream (HTTP) or connection (stdio), the
// boundary (taskwire.go) passes tasks/result on to the go-sdk disguised as
// a tools/call carrying, in _meta["isogate/task-result"], the unguessable
// token of a result intent (owner, task id); ResultMiddleware answers
// it before any tool is looked up. The input is asked of the replica that
// runs the task: a tasks/result on another replica waits for the outcome
// only.

// taskResultMetaKey carries the token of a result intent in the disguised
// tools/call, from the boundary to ResultMiddleware.
const taskResultMetaKey = "isogate/task-result"

// taskResultTool names the disguised tools/call (never looked up).
const taskResultTool = "isogate/tasks-result"

// resultIntent is a tasks/result as the boundary saw it.
type resultIntent struct {
	owner  string
	taskID string
}

// taskRunKey carries the runningTask of a 2025-11-25 task in its run's
// context, for Elicit.
type taskRunKey struct{}

// taskAsk is one elicitation a task's run waits to have answered.
type taskAsk struct {
	params  *mcp.ElicitParams
	ctx     context.Context // the asker's: the ask is withdrawn when it ends
	reply   chan askReply   // buffered
	sending bool            // a tasks/result request is asking it now (rt.mu)
}

// askReply is the client's answer to a taskAsk.
type askReply struct {
	res *mcp.ElicitResult
	err error
}

// disguiseResult turns tasks/result's params into those of the tools/call
// that carries its result intent's token, and returns the token, for the
// request's end to drop. Past maxTaskIntents it fails (errTooManyIntents).
func (g *Tasks) disguiseResult(params json.RawMessage, owner string) (json.RawMessage, string, error) {
	var p taskParams
	_ = json.Unmarshal(params, &p)
	token, err := g.intents.add(&resultIntent{owner: owner, taskID: p.TaskID})
	if err != nil {
		return nil, "", err
	}
	out, err := json.Marshal(map[string]any{"name": taskResultTool, "arguments": map[string]any{},
		"_meta": map[string]any{taskResultMetaKey: token}})
	if err != nil {
		g.intents.drop(token)
		return nil, "", err
	}
	return out, token, nil
}

// ResultMiddleware answers a disguised tasks/result (see above): it
// waits for the task's outcome, asking the client, on this request, what
// the task's run asks meanwhile.
func (g *Tasks) ResultMiddleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		call, ok := req.(*mcp.CallToolRequest)
		if method != "tools/call" || !ok || call.Params == nil || call.Params.Meta[taskResultMetaKey] == nil {
			return next(ctx, method, req)
		}
		token, _ := call.Params.Meta[taskResultMetaKey].(string)
		v, _ := g.intents.take(token)
		in, isResult := v.(*resultIntent)
		if !isResult { // not put there by the boundary
			return nil, errTaskNotFound()
		}
		res, err := g.result(ctx, in.owner, in.taskID, call.Session)
		if err != nil {
			return nil, err
		}
		raw, err := json.Marshal(res)
		if err != nil {
			return nil, err
		}
		return rawCallResult{CallToolResult: &mcp.CallToolResult{}, raw: raw}, nil
	}
}

// rawCallResult is a result already encoded (a task's outcome), an
// mcp.Result for the go-sdk through the CallToolResult it embeds.
type rawCallResult struct {
	*mcp.CallToolResult
	raw json.RawMessage
}

// MarshalJSON implements json.Marshaler.
func (r rawCallResult) MarshalJSON() ([]byte, error) { return r.raw, nil }

// sendAsks sends each ask nobody is asking yet to the client of ss, in the
// background, on ctx (the tasks/result request's); it returns a channel
// closed when a new ask arrives.
func (rt *runningTask) sendAsks(ctx context.Context, ss *mcp.ServerSession) <-chan struct{} {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	if rt.askPoke == nil {
		rt.askPoke = make(chan struct{})
	}
	for _, a := range rt.asks {
		if a.sending || ss == nil {
			continue
		}
		a.sending = true
		go rt.send(ctx, ss, a)
	}
	return rt.askPoke
}

// send asks a of the client of ss on ctx; an answer goes to the run, a
// failure of this request leaves a for the next tasks/result.
func (rt *runningTask) send(ctx context.Context, ss *mcp.ServerSession, a *taskAsk) {
	ectx, cancel := context.WithCancel(ctx)
	defer cancel()
	defer context.AfterFunc(a.ctx, cancel)()
	p := *a.params
	p.Meta = mcp.Meta{}
	for k, v := range a.params.Meta {
		p.Meta[k] = v
	}
	p.Meta[relatedTaskKey] = map[string]string{"taskId": rt.task.ID}
	res, err := ss.Elicit(ectx, &p)
	if err != nil && ectx.Err() != nil {
		rt.mu.Lock()
		a.sending = false // asked again by the next tasks/result
		rt.mu.Unlock()
		return
	}
	a.reply <- askReply{res: res, err: err}
}

// ask holds an elicitation of the task's run until a tasks/result sends it
// and its client answers; the task is input_required meanwhile.
func (rt *runningTask) ask(ctx context.Context, params *mcp.ElicitParams) (*mcp.ElicitResult, error) {
	a := &taskAsk{params: params, ctx: ctx, reply: make(chan askReply, 1)}
	rt.mu.Lock()
	rt.asks = append(rt.asks, a)
	if rt.askPoke != nil {
		close(rt.askPoke)
	}
	rt.askPoke = make(chan struct{})
	rt.mu.Unlock()
	rt.setInputStatus(resultstore.TaskInputRequired)
	defer func() {
		rt.mu.Lock()
		for i, x := range rt.asks {
			if x == a {
				rt.asks = append(rt.asks[:i:i], rt.asks[i+1:]...)
				break
			}
		}
		left := len(rt.asks)
		rt.mu.Unlock()
		if left == 0 {
			rt.setInputStatus(resultstore.TaskWorking)
		}
	}()
	select {
	case r := <-a.reply:
		return r.res, r.err
	case <-ctx.Done():
		return nil, context.Cause(ctx)
	}
}

// setInputStatus moves a task that is not over to status (input_required
// or working), keeps it and tells the client.
func (rt *runningTask) setInputStatus(status string) {
	rt.mu.Lock()
	if rt.task.Terminal() || rt.task.Status == status {
		rt.mu.Unlock()
		return
	}
	rt.task.Status, rt.task.UpdatedAt = status, time.Now()
	t := rt.task
	rt.mu.Unlock()
	if rt.save(&t) == nil {
		rt.tell(&t)
	}
}

// Elicit is a sending middleware: an elicitation a 2025-11-25 task's
// run sends is held for the task's tasks/result (see above) instead of
// going out on no request.
func (g *Tasks) Elicit(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if method == "elicitation/create" {
			if rt, ok := ctx.Value(taskRunKey{}).(*runningTask); ok {
				if p, ok := req.GetParams().(*mcp.ElicitParams); ok && p != nil {
					return rt.ask(ctx, p)
				}
			}
		}
		return next(ctx, method, req)
	}
}
