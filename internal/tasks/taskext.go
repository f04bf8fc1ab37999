package tasks

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/isogate/isogate/internal/resultstore"
)

// Tasks in the 2026-07-28 era: the `io.modelcontextprotocol/tasks`
// extension (SEP-2663), over stateless streamable HTTP, the only transport
// on which the go-sdk speaks that revision. The same gateway-owned tasks
// as in 2025-11-25 (tasks.go: the same store, owner, limits and background
// run), on another wire:
//   - the server advertises the extension under `capabilities.extensions`
//     of server/discover (and no `tasks` capability);
//   - a client opts in per request, with the extension in the
//     `extensions` of its `_meta["io.modelcontextprotocol/clientCapabilities"]`;
//     the server decides which calls become tasks: isogate makes one of a
//     tools/call of a tool it lists with `execution.taskSupport`
//     (call_tool_chain, task-capable backend tools) and answers a flat
//     CreateTaskResult (`resultType: "task"`, `ttlMs`, `pollIntervalMs`);
//     a legacy `params.task` is ignored;
//   - tasks/get answers the DetailedTask, the result or the JSON-RPC error
//     inlined once it is over; tasks/update and tasks/cancel answer an
//     empty ack; tasks/result and tasks/list are not methods any more
//     (-32601, from the go-sdk);
//   - tasks/* of a request that does not declare the extension are refused
//     with -32021 (Missing Required Client Capability), and their
//     Mcp-Method and Mcp-Name (= taskId) headers must match the body
//     (-32020, HTTP 400), as the go-sdk checks them for the methods it
//     knows (SEP-2243).

// Extension is the 2026-07-28 tasks extension's identifier.
const Extension = "io.modelcontextprotocol/tasks"

// modernProtocol is the first protocol revision with per-request _meta
// (no initialize) and tasks as an extension.
const modernProtocol = "2026-07-28"

// modernMethods are the tasks/* requests of the extension.
var modernMethods = map[string]bool{"tasks/get": true, "tasks/update": true, "tasks/cancel": true}

// requestMeta is what the boundary reads of a request's _meta.
type requestMeta struct {
	modern   bool // protocol 2026-07-28 or later (per-request _meta)
	version  string
	declared bool // the client declared the tasks extension
}

// readRequestMeta reads the protocol version and the client's declared
// extensions from a request's params.
func readRequestMeta(params json.RawMessage) requestMeta {
	var p struct {
		Meta struct {
			Version string `json:"io.modelcontextprotocol/protocolVersion"`
			Caps    struct {
				Extensions map[string]json.RawMessage `json:"extensions"`
			} `json:"io.modelcontextprotocol/clientCapabilities"`
		} `json:"_meta"`
	}
	if json.Unmarshal(params, &p) != nil {
		return requestMeta{}
	}
	v := p.Meta.Version
	_, declared := p.Meta.Caps.Extensions[Extension]
	return requestMeta{modern: v >= modernProtocol, version: v, declared: declared}
}

// augmentModern turns a 2026-07-28 tools/call that the gateway runs as a
// task into a plain call carrying a task intent's token (like augment),
// and returns the token ("" when the call stays synchronous: the client
// did not declare the extension, or the tool is not one isogate lists as
// task-capable). A legacy `params.task` is dropped either way (SEP-2663:
// ignored). Past maxTaskIntents it fails (errTooManyIntents).
func (g *Tasks) augmentModern(params json.RawMessage, rm requestMeta, owner string) (json.RawMessage, string, error) {
	if !rm.declared && !mayHaveKey(params, "task") {
		return params, "", nil // neither a task nor a legacy `task` to drop
	}
	var p map[string]json.RawMessage
	if json.Unmarshal(params, &p) != nil {
		return params, "", nil
	}
	_, legacy := p["task"]
	delete(p, "task")
	var name string
	_ = json.Unmarshal(p["name"], &name)
	asTask := rm.declared && g.host.TaskSupport(name) != ""
	var token string
	if asTask {
		meta := map[string]any{}
		_ = json.Unmarshal(p["_meta"], &meta)
		if meta == nil {
			meta = map[string]any{}
		}
		var err error
		if token, err = g.intents.add(&taskIntent{owner: owner, modern: true}); err != nil {
			return params, "", err
		}
		meta[taskMetaKey] = token
		p["_meta"], _ = json.Marshal(meta)
	}
	if !asTask && !legacy {
		return params, "", nil
	}
	out, err := json.Marshal(p)
	if err != nil {
		g.intents.drop(token)
		return params, "", nil
	}
	return out, token, nil
}

// modernTask is a Task on the 2026-07-28 wire: CreateTaskResult (with
// resultType "task") and tasks/get's DetailedTask (with resultType
// "complete" and, by status, result, error or inputRequests).
type modernTask struct {
	ResultType     string          `json:"resultType"`
	TaskID         string          `json:"taskId"`
	Status         string          `json:"status"`
	StatusMessage  string          `json:"statusMessage,omitempty"`
	CreatedAt      string          `json:"createdAt"`
	LastUpdatedAt  string          `json:"lastUpdatedAt"`
	TTLMs          int64           `json:"ttlMs"`
	PollIntervalMs int64           `json:"pollIntervalMs"`
	Result         json.RawMessage `json:"result,omitempty"`
	Error          *jsonrpc.Error  `json:"error,omitempty"`
	InputRequests  json.RawMessage `json:"inputRequests,omitempty"`
}

func toModern(t *resultstore.Task, resultType string) modernTask {
	w := toWire(t)
	return modernTask{ResultType: resultType, TaskID: w.TaskID, Status: w.Status, StatusMessage: w.StatusMessage,
		CreatedAt: w.CreatedAt, LastUpdatedAt: w.LastUpdatedAt, TTLMs: w.TTL, PollIntervalMs: w.PollInterval}
}

// ack is the empty acknowledgement of tasks/update and tasks/cancel.
var ack = map[string]string{"resultType": "complete"}

// errMissingTasksExtension refuses tasks/* of a request that did not
// declare the extension.
func errMissingTasksExtension() *jsonrpc.Error {
	caps := &mcp.ClientCapabilities{}
	caps.AddExtension(Extension, nil)
	data, _ := json.Marshal(mcp.MissingRequiredClientCapabilityData{RequiredCapabilities: caps})
	return &jsonrpc.Error{Code: mcp.CodeMissingRequiredClientCapabilities, Data: data,
		Message: "Missing required client capability: declare the " + Extension +
			" extension in _meta[\"" + mcp.MetaKeyClientCapabilities + "\"].extensions"}
}

// checkModernHeaders checks the routing headers of a 2026-07-28 tasks/*
// request against its body (SEP-2243, SEP-2663): Mcp-Protocol-Version,
// Mcp-Method, and Mcp-Name = params.taskId, each present and equal.
func checkModernHeaders(h http.Header, method, version, taskID string) error {
	for _, c := range []struct{ header, body string }{
		{"Mcp-Protocol-Version", version}, {"Mcp-Method", method}, {"Mcp-Name", taskID}} {
		got := strings.TrimSpace(h.Get(c.header))
		if got == "" {
			return &jsonrpc.Error{Code: mcp.CodeHeaderMismatch, Message: "missing required " + c.header + " header for method " + method}
		}
		if got != c.body {
			return &jsonrpc.Error{Code: mcp.CodeHeaderMismatch,
				Message: "header mismatch: " + c.header + " header value '" + got + "' does not match body value '" + c.body + "'"}
		}
	}
	return nil
}

// answerModern serves one 2026-07-28 tasks/get, tasks/update or
// tasks/cancel of owner.
func (g *Tasks) answerModern(ctx context.Context, owner, method string, params json.RawMessage) (any, error) {
	var p struct {
		TaskID         string                     `json:"taskId"`
		InputResponses map[string]json.RawMessage `json:"inputResponses"`
	}
	if json.Unmarshal(params, &p) != nil || p.TaskID == "" {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: method + ": params.taskId is required"}
	}
	switch method {
	case "tasks/get":
		t, err := g.store.Get(ctx, owner, p.TaskID)
		if err != nil {
			return nil, storeError(err)
		}
		return g.detailed(ctx, g.expire(ctx, t))
	case "tasks/update":
		if _, err := g.store.Get(ctx, owner, p.TaskID); err != nil {
			return nil, storeError(err)
		}
		if v, ok := g.running.Load(p.TaskID); ok {
			if err := v.(*runningTask).update(p.InputResponses); err != nil {
				return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: err.Error()}
			}
		}
		return ack, nil
	case "tasks/cancel":
		// A task already over is acknowledged alike (idempotent).
		if _, err := g.cancel(ctx, owner, p.TaskID); err != nil && !errors.Is(err, resultstore.ErrTaskTerminal) {
			return nil, storeError(err)
		}
		return ack, nil
	}
	return nil, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "method not found: " + method}
}

// detailed is tasks/get's DetailedTask: over, the call's result inlined
// (status completed, a tool's error result included) or its JSON-RPC
// error (status failed).
func (g *Tasks) detailed(ctx context.Context, t *resultstore.Task) (modernTask, error) {
	out := toModern(t, "complete")
	if t.Status == resultstore.TaskInputRequired {
		out.InputRequests = t.InputRequests
	}
	if !t.Terminal() || t.Status == resultstore.TaskCancelled {
		return out, nil
	}
	if t.ResultID == "" { // its outcome could not be kept
		out.Status = resultstore.TaskFailed
		out.Error = &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: t.StatusMessage}
		return out, nil
	}
	data, err := g.results.Get(ctx, t.Owner, t.ResultID)
	if err != nil {
		return out, storeError(err)
	}
	var o taskOutcome
	if err := json.Unmarshal(data, &o); err != nil {
		return out, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "decoding the task's result: " + err.Error()}
	}
	if o.Error != nil {
		out.Status, out.Error = resultstore.TaskFailed, o.Error
		return out, nil
	}
	out.Status, out.Result = resultstore.TaskCompleted, o.Result
	return out, nil
}
