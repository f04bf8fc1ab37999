package tasks

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/isogate/isogate/internal/resultstore"
)

// Input inside a 2026-07-28 task (taskext.go): a call that needs the
// client's input (an approval of call_tool_chain or of a passthrough call,
// a backend's elicitation) answers its 2026-07-28 request with an
// InputRequiredResult (internal/approvals). Run as a task, that
// result is not the task's outcome: the task goes input_required with
// those inputRequests (tasks/get shows them), tasks/update brings the
// client's inputResponses (a subset at a time; the answered keys leave
// inputRequests), and once every request is answered the call is retried
// with them and its requestState, as the client itself would have, and
// the task is working again. Keys are the run's, unique over its life.
// The answers reach the replica that runs the task (a tasks/update on
// another one finds the task but cannot hand them over).

// inputRounds turns each InputRequiredResult of a task's call into an
// input_required round, until the call ends otherwise.
func (rt *runningTask) inputRounds(ctx context.Context, call *mcp.CallToolRequest, res mcp.Result, err error,
	run func(context.Context, mcp.Request) (mcp.Result, error)) (mcp.Result, error) {
	for err == nil {
		cr, ok := res.(*mcp.CallToolResult)
		if !ok || cr == nil || len(cr.InputRequests) == 0 {
			return res, nil
		}
		answers, werr := rt.waitInput(ctx, cr.InputRequests)
		if werr != nil {
			return nil, werr
		}
		retry, rerr := retryRequest(call, answers, cr.RequestState)
		if rerr != nil {
			return nil, rerr
		}
		res, err = run(ctx, retry)
	}
	return res, err
}

// waitInput puts the task in input_required with requests and waits until
// tasks/update has answered them all.
func (rt *runningTask) waitInput(ctx context.Context, requests mcp.InputRequestMap) (map[string]json.RawMessage, error) {
	raw, err := json.Marshal(requests)
	if err != nil {
		return nil, fmt.Errorf("encoding the task's input requests: %w", err)
	}
	pending := map[string]json.RawMessage{}
	if err := json.Unmarshal(raw, &pending); err != nil {
		return nil, fmt.Errorf("encoding the task's input requests: %w", err)
	}
	answered := make(chan struct{})
	rt.mu.Lock()
	rt.pending, rt.answers, rt.answered = pending, map[string]json.RawMessage{}, answered
	rt.task.Status, rt.task.InputRequests, rt.task.UpdatedAt = resultstore.TaskInputRequired, raw, time.Now()
	t := rt.task
	rt.mu.Unlock()
	if err := rt.save(&t); err != nil {
		return nil, err
	}
	select {
	case <-answered:
	case <-ctx.Done():
		return nil, context.Cause(ctx)
	}
	rt.mu.Lock()
	answers := rt.answers
	rt.pending, rt.answers = nil, nil
	rt.task.Status, rt.task.InputRequests, rt.task.UpdatedAt = resultstore.TaskWorking, nil, time.Now()
	t = rt.task
	rt.mu.Unlock()
	return answers, rt.save(&t)
}

// update takes tasks/update's inputResponses: answers to outstanding keys
// are kept (others ignored), and the rest stay in inputRequests.
func (rt *runningTask) update(responses map[string]json.RawMessage) error {
	rt.mu.Lock()
	if rt.pending == nil {
		rt.mu.Unlock()
		return nil
	}
	for k, v := range responses {
		if _, ok := rt.pending[k]; ok {
			rt.answers[k] = v
			delete(rt.pending, k)
		}
	}
	if len(rt.pending) == 0 {
		if rt.answered != nil {
			close(rt.answered)
			rt.answered = nil
		}
		rt.mu.Unlock()
		return nil
	}
	rt.task.InputRequests, _ = json.Marshal(rt.pending)
	rt.task.UpdatedAt = time.Now()
	t := rt.task
	rt.mu.Unlock()
	return rt.save(&t)
}

// save writes the task's state to the store.
func (rt *runningTask) save(t *resultstore.Task) error {
	ctx, cancel := context.WithTimeout(context.Background(), SendTimeout)
	defer cancel()
	if err := rt.gt.store.Update(ctx, t); err != nil {
		return fmt.Errorf("keeping the task's state: %w", err)
	}
	return nil
}

// retryRequest is call retried with the client's answers and the
// requestState of the InputRequiredResult they answer.
func retryRequest(call *mcp.CallToolRequest, answers map[string]json.RawMessage, state string) (*mcp.CallToolRequest, error) {
	raw, err := json.Marshal(call.Params)
	if err != nil {
		return nil, fmt.Errorf("retrying the task's call: %w", err)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, fmt.Errorf("retrying the task's call: %w", err)
	}
	m["inputResponses"], _ = json.Marshal(answers)
	m["requestState"], _ = json.Marshal(state)
	raw, _ = json.Marshal(m)
	var p mcp.CallToolParamsRaw
	if err := json.Unmarshal(raw, &p); err != nil {
		return nil, fmt.Errorf("retrying the task's call: decoding the input responses: %w", err)
	}
	out := *call
	out.Params = &p
	return &out, nil
}
