package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// modernRPC posts one 2026-07-28 JSON-RPC request (stateless: the protocol
// version, client info and capabilities in _meta, the Mcp-* headers set as
// a client of that revision sets them) with a bearer token; withTasks
// declares the io.modelcontextprotocol/tasks extension. headers override
// the computed ones. It returns the HTTP status, and the result or error.
func modernRPC(t *testing.T, url, token, method string, params map[string]any, withTasks bool, headers map[string]string) (int, json.RawMessage, *rpcError) {
	t.Helper()
	caps := map[string]any{}
	if withTasks { // a client of tasks that can also answer approvals
		caps["extensions"] = map[string]any{"io.modelcontextprotocol/tasks": map[string]any{}}
		caps["elicitation"] = map[string]any{}
	}
	if params == nil {
		params = map[string]any{}
	}
	params["_meta"] = map[string]any{"io.modelcontextprotocol/protocolVersion": "2026-07-28",
		"io.modelcontextprotocol/clientInfo":         map[string]any{"name": "modern-tasks-test", "version": "1"},
		"io.modelcontextprotocol/clientCapabilities": caps}
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", method)
	if name, ok := params["name"].(string); ok {
		req.Header.Set("Mcp-Name", name)
	}
	if id, ok := params["taskId"].(string); ok {
		req.Header.Set("Mcp-Name", id)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s: %v", method, err)
	}
	defer resp.Body.Close()
	res, rerr, err := readRPCAnswer(method, resp)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, res, rerr
}

// modernTask is a task on the 2026-07-28 wire, as the test reads it.
type modernTask struct {
	ResultType     string          `json:"resultType"`
	TaskID         string          `json:"taskId"`
	Status         string          `json:"status"`
	StatusMessage  string          `json:"statusMessage"`
	CreatedAt      string          `json:"createdAt"`
	TTLMs          *int64          `json:"ttlMs"`
	PollIntervalMs int64           `json:"pollIntervalMs"`
	Result         json.RawMessage `json:"result"`
	Error          *rpcError       `json:"error"`
	InputRequests  json.RawMessage `json:"inputRequests"`
	Task           json.RawMessage `json:"task"` // the 2025-11-25 wrapper: must be absent
}

// TestModernTasksExtension: the 2026-07-28 tasks extension on isogate's
// stateless HTTP surface, spoken raw as SEP-2663 and the conformance
// suite's tasks scenarios define it. server/discover advertises the
// extension (and no v1 `tasks` capability); a call_tool_chain from a client
// declaring it answers a flat CreateTaskResult (resultType "task", ttlMs,
// pollIntervalMs) that tasks/get resolves at once and polls to completed
// with the result inlined (resultType "complete", no related-task _meta);
// a program's thrown error is completed with result.isError; the same call
// without the extension is synchronous; a legacy params.task does not make
// a task of a tool that is not task-capable; tasks/* without the extension
// are refused with -32021; tasks/result and tasks/list are -32601; a
// mismatched Mcp-Name is -32020 (HTTP 400); another principal's task id and
// an unknown one are the same -32602; tasks/cancel of a busy loop is an
// empty ack, the task is cancelled, and a second cancel is the same ack.
func TestModernTasksExtension(t *testing.T) {
	everythingServer(t)
	cfg := writeConfig(t, "")
	url, _ := startHTTPProcess(t, cfg, "ISOGATE_SERVER__STATELESS=true",
		"ISOGATE_SERVER__AUTH__MODE=token", "ISOGATE_SERVER__AUTH__TOKENS__ALICE__TOKEN=alice-modern-token",
		"ISOGATE_SERVER__AUTH__TOKENS__BOB__TOKEN=bob-modern-token-12",
		"ISOGATE_SANDBOX__TIMEOUT=60s")
	const alice, bob = "alice-modern-token", "bob-modern-token-12"

	_, raw, rerr := modernRPC(t, url, alice, "server/discover", nil, true, nil)
	var disc struct {
		Capabilities struct {
			Extensions map[string]json.RawMessage `json:"extensions"`
			Tasks      json.RawMessage            `json:"tasks"`
		} `json:"capabilities"`
	}
	if rerr != nil || json.Unmarshal(raw, &disc) != nil || disc.Capabilities.Extensions["io.modelcontextprotocol/tasks"] == nil || disc.Capabilities.Tasks != nil {
		t.Fatalf("server/discover: %+v %s", rerr, raw)
	}

	call := func(token, code string, withTasks bool, extra map[string]any) (json.RawMessage, *rpcError) {
		params := map[string]any{"name": "call_tool_chain", "arguments": map[string]any{"code": code}}
		for k, v := range extra {
			params[k] = v
		}
		_, raw, rerr := modernRPC(t, url, token, "tools/call", params, withTasks, nil)
		return raw, rerr
	}
	get := func(token, id string) (modernTask, *rpcError) {
		_, raw, rerr := modernRPC(t, url, token, "tasks/get", map[string]any{"taskId": id}, true, nil)
		var mt modernTask
		_ = json.Unmarshal(raw, &mt)
		return mt, rerr
	}
	create := func(code string) modernTask {
		t.Helper()
		raw, rerr := call(alice, code, true, nil)
		var mt modernTask
		if rerr != nil || json.Unmarshal(raw, &mt) != nil || mt.ResultType != "task" || mt.TaskID == "" ||
			mt.Status != "working" || mt.Task != nil || mt.TTLMs == nil || *mt.TTLMs <= 0 || mt.PollIntervalMs <= 0 ||
			mt.CreatedAt == "" || strings.Contains(string(raw), `"ttl"`) || strings.Contains(string(raw), `"pollInterval"`) {
			t.Fatalf("CreateTaskResult: %+v %s", rerr, raw)
		}
		// Durably created: resolvable at once.
		if st, rerr := get(alice, mt.TaskID); rerr != nil || st.TaskID != mt.TaskID || st.ResultType != "complete" {
			t.Fatalf("tasks/get right after the CreateTaskResult: %+v %+v", st, rerr)
		}
		return mt
	}
	await := func(id string) modernTask {
		t.Helper()
		for {
			st, rerr := get(alice, id)
			if rerr != nil {
				t.Fatalf("tasks/get: %+v", rerr)
			}
			switch st.Status {
			case "completed", "failed", "cancelled":
				return st
			}
			time.Sleep(100 * time.Millisecond) // a client's poll interval, not synchronisation
		}
	}

	task := create(`const r = await everything.echo({message: "from the task"}); return {answer: 6 * 7, r}`)
	done := await(task.TaskID)
	if done.Status != "completed" || done.ResultType != "complete" || !strings.Contains(string(done.Result), "42") || !strings.Contains(string(done.Result), "from the task") ||
		strings.Contains(string(done.Result), "related-task") || done.Error != nil {
		t.Fatalf("the completed task: %+v %s", done, done.Result)
	}

	thrown := await(create(`throw new Error("boom from the program")`).TaskID)
	if thrown.Status != "completed" || !strings.Contains(string(thrown.Result), `"isError":true`) {
		t.Errorf("a program's error: %+v %s", thrown, thrown.Result)
	}

	// Without the extension: synchronous, and tasks/* are refused.
	raw, rerr = call(alice, "return 6 * 7", false, nil)
	if rerr != nil || strings.Contains(string(raw), `"taskId"`) || !strings.Contains(string(raw), "42") {
		t.Errorf("call_tool_chain without the extension: %+v %s", rerr, raw)
	}
	for _, m := range []string{"tasks/get", "tasks/update", "tasks/cancel"} {
		_, _, rerr := modernRPC(t, url, alice, m, map[string]any{"taskId": task.TaskID, "inputResponses": map[string]any{}}, false, nil)
		if rerr == nil || rerr.Code != -32021 {
			t.Errorf("%s without the extension: %+v", m, rerr)
		}
	}
	// A legacy params.task does not make a task of a tool that is not
	// task-capable.
	_, raw, rerr = modernRPC(t, url, alice, "tools/call", map[string]any{"name": "search_tools", "arguments": map[string]any{"query": "echo"},
		"task": map[string]any{"ttl": 60000}}, true, nil)
	if rerr != nil || strings.Contains(string(raw), `"taskId"`) || !strings.Contains(string(raw), "echo") {
		t.Errorf("a sync tool with a legacy task param: %+v %s", rerr, raw)
	}
	for _, m := range []string{"tasks/result", "tasks/list"} {
		if _, _, rerr := modernRPC(t, url, alice, m, map[string]any{"taskId": task.TaskID}, true, nil); rerr == nil || rerr.Code != -32601 {
			t.Errorf("%s in 2026-07-28: %+v", m, rerr)
		}
	}
	status, _, rerr := modernRPC(t, url, alice, "tasks/get", map[string]any{"taskId": task.TaskID}, true, map[string]string{"Mcp-Name": "another-task"})
	if status != http.StatusBadRequest || rerr == nil || rerr.Code != -32020 {
		t.Errorf("tasks/get with a mismatched Mcp-Name: HTTP %d %+v", status, rerr)
	}

	// Another principal: not found, as an unknown id.
	_, foreign := get(bob, task.TaskID)
	_, unknown := get(bob, "0123456789abcdef0123456789abcdef")
	if foreign == nil || unknown == nil || *foreign != *unknown || foreign.Code != -32602 {
		t.Errorf("bob's tasks/get of alice's task: %+v, of an unknown one: %+v", foreign, unknown)
	}
	if _, _, rerr := modernRPC(t, url, bob, "tasks/cancel", map[string]any{"taskId": task.TaskID}, true, nil); rerr == nil || rerr.Code != -32602 {
		t.Errorf("bob's tasks/cancel of alice's task: %+v", rerr)
	}

	busy := create(`for (;;) {}`)
	for i := 0; i < 2; i++ { // the second cancel finds it over: the same ack
		_, raw, rerr := modernRPC(t, url, alice, "tasks/cancel", map[string]any{"taskId": busy.TaskID}, true, nil)
		if rerr != nil || string(raw) != `{"resultType":"complete"}` {
			t.Fatalf("tasks/cancel #%d: %+v %s", i+1, rerr, raw)
		}
	}
	if st := await(busy.TaskID); st.Status != "cancelled" {
		t.Errorf("after tasks/cancel: %+v", st)
	}
}

// TestModernTaskApproval: an approval inside a program run as a 2026-07-28
// task. The task goes input_required with the approval's elicitation in
// inputRequests; a tasks/update with an unknown key changes nothing; the
// answer by tasks/update (an empty ack) resumes the program, which calls
// the approved tool and completes with its result inlined.
func TestModernTaskApproval(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "isogate.yaml")
	yaml := fmt.Sprintf(`server:
  cache_dir: %s
  log_level: debug
  stateless: true
backends:
  everything:
    command: node
    args: [%q, stdio]
    tools:
      approve: [echo]
sandbox:
  isolation: thread
  trusted_code: true
  timeout: 60s
`, filepath.Join(dir, "cache"), everythingServer(t))
	if err := os.WriteFile(cfg, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	url, _ := startHTTPProcess(t, cfg, "ISOGATE_SERVER__AUTH__MODE=token",
		"ISOGATE_SERVER__AUTH__TOKENS__ALICE__TOKEN=alice-approval-token")
	const alice = "alice-approval-token"
	get := func(id string) modernTask {
		t.Helper()
		_, raw, rerr := modernRPC(t, url, alice, "tasks/get", map[string]any{"taskId": id}, true, nil)
		var mt modernTask
		if rerr != nil || json.Unmarshal(raw, &mt) != nil {
			t.Fatalf("tasks/get: %+v %s", rerr, raw)
		}
		return mt
	}
	poll := func(id string, until func(modernTask) bool) modernTask {
		t.Helper()
		for {
			if mt := get(id); until(mt) {
				return mt
			}
			time.Sleep(100 * time.Millisecond) // a client's poll interval, not synchronisation
		}
	}
	update := func(id string, responses map[string]any) {
		t.Helper()
		_, raw, rerr := modernRPC(t, url, alice, "tasks/update", map[string]any{"taskId": id, "inputResponses": responses}, true, nil)
		if rerr != nil || string(raw) != `{"resultType":"complete"}` {
			t.Fatalf("tasks/update: %+v %s", rerr, raw)
		}
	}

	_, raw, rerr := modernRPC(t, url, alice, "tools/call", map[string]any{"name": "call_tool_chain",
		"arguments": map[string]any{"code": `const r = await everything.echo({message: "approved in a task"}); return r`}}, true, nil)
	var created modernTask
	if rerr != nil || json.Unmarshal(raw, &created) != nil || created.ResultType != "task" {
		t.Fatalf("CreateTaskResult: %+v %s", rerr, raw)
	}
	waiting := poll(created.TaskID, func(mt modernTask) bool { return mt.Status != "working" })
	var requests map[string]struct {
		Method string `json:"method"`
		Params struct {
			Message string `json:"message"`
		} `json:"params"`
	}
	if waiting.Status != "input_required" || json.Unmarshal(waiting.InputRequests, &requests) != nil || len(requests) != 1 {
		t.Fatalf("the task waiting for its approval: %+v %s", waiting, waiting.InputRequests)
	}
	var key string
	for k, r := range requests {
		key = k
		if r.Method != "elicitation/create" || !strings.Contains(r.Params.Message, "echo") {
			t.Fatalf("the approval request: %+v", r)
		}
	}
	update(created.TaskID, map[string]any{"not-a-key": map[string]any{"action": "accept", "content": map[string]any{}}})
	if still := get(created.TaskID); still.Status != "input_required" || !strings.Contains(string(still.InputRequests), key) {
		t.Fatalf("after an answer to no request: %+v %s", still, still.InputRequests)
	}
	update(created.TaskID, map[string]any{key: map[string]any{"action": "accept", "content": map[string]any{}}})
	done := poll(created.TaskID, func(mt modernTask) bool { return mt.Status != "working" && mt.Status != "input_required" })
	if done.Status != "completed" || !strings.Contains(string(done.Result), "Echo: approved in a task") || strings.Contains(string(done.Result), `"isError":true`) {
		t.Fatalf("the approved task: %+v %s", done, done.Result)
	}
}
