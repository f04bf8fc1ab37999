package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/isogate/isogate/internal/resultstore/redistest"
)

// rpcError is a JSON-RPC error answer.
type rpcError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

// rawRPC posts one JSON-RPC request (protocol 2025-11-25, no session) with
// a bearer token and returns its result or error, from a JSON or an SSE
// answer.
func rawRPC(t *testing.T, url, token, method string, params any) (json.RawMessage, *rpcError) {
	t.Helper()
	res, rerr, err := tryRPC(url, token, method, params)
	if err != nil {
		t.Fatal(err)
	}
	return res, rerr
}

// readRPCAnswer reads the JSON-RPC answer of an HTTP response, a JSON body
// or an SSE stream: its result or error; an error when there is none,
// with what was read.
func readRPCAnswer(method string, resp *http.Response) (json.RawMessage, *rpcError, error) {
	var msg struct {
		Result json.RawMessage `json:"result"`
		Error  *rpcError       `json:"error"`
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 1<<20)
	var all strings.Builder
	for sc.Scan() {
		line := sc.Text()
		all.WriteString(line + "\n")
		data, sse := strings.CutPrefix(line, "data: ")
		if !sse {
			data = line
		}
		if json.Unmarshal([]byte(data), &msg) == nil && (msg.Result != nil || msg.Error != nil) {
			return msg.Result, msg.Error, nil
		}
	}
	return nil, nil, fmt.Errorf("%s: no JSON-RPC answer (HTTP %d, %v):\n%s", method, resp.StatusCode, sc.Err(), all.String())
}

// taskState is the part of a task the test reads.
type taskState struct {
	TaskID        string `json:"taskId"`
	Status        string `json:"status"`
	StatusMessage string `json:"statusMessage"`
}

// createTask sends a task-augmented call_tool_chain of code and returns
// the task.
func createTask(t *testing.T, url, token, code string) taskState {
	t.Helper()
	raw, rerr := rawRPC(t, url, token, "tools/call", map[string]any{"name": "call_tool_chain",
		"arguments": map[string]any{"code": code}, "task": map[string]any{"ttl": 120000}})
	if rerr != nil {
		t.Fatalf("creating the task: %+v", rerr)
	}
	var created struct{ Task taskState }
	if err := json.Unmarshal(raw, &created); err != nil || created.Task.TaskID == "" || created.Task.Status != "working" {
		t.Fatalf("CreateTaskResult: %s", raw)
	}
	return created.Task
}

// TestStatelessReplicasShareTasks: two real isogate processes in stateless
// mode share one real redis-server (with store.hmac_key). A program run as
// a task created through replica A is polled with tasks/get and its result
// read with tasks/result through replica B; another principal gets "not
// found" for it on either replica. A task running a busy loop on A is
// cancelled through B: B and A report it cancelled, and A stops the program
// (its principal's one sandbox slot is free again: a next program runs).
func TestStatelessReplicasShareTasks(t *testing.T) {
	everythingServer(t)
	srv := redistest.ForTest(t)
	cfg := writeConfig(t, "")
	env := []string{"ISOGATE_SERVER__STATELESS=true", "ISOGATE_STORE__REDIS_URL=" + srv.URL(),
		"ISOGATE_STORE__HMAC_KEY=replica-tasks-hmac-key-0123456789",
		"ISOGATE_SERVER__AUTH__MODE=token", "ISOGATE_SERVER__AUTH__TOKENS__ALICE__TOKEN=alice-replica-token",
		"ISOGATE_SERVER__AUTH__TOKENS__BOB__TOKEN=bob-replica-token-1",
		"ISOGATE_SANDBOX__TIMEOUT=90s", "ISOGATE_SANDBOX__MAX_CONCURRENT_PER_PRINCIPAL=1"}
	urlA, _ := startHTTPProcess(t, cfg, env...)
	urlB, _ := startHTTPProcess(t, cfg, env...)
	const alice, bob = "alice-replica-token", "bob-replica-token-1"

	task := createTask(t, urlA, alice, `const r = await everything.simulate_research_query({topic: "replicas"}); return r`)
	get := func(url, token, id string) (taskState, *rpcError) {
		raw, rerr := rawRPC(t, url, token, "tasks/get", map[string]any{"taskId": id})
		var st taskState
		_ = json.Unmarshal(raw, &st)
		return st, rerr
	}
	// tasks/result through B waits for the end of the run on A.
	raw, rerr := rawRPC(t, urlB, alice, "tasks/result", map[string]any{"taskId": task.TaskID})
	if rerr != nil || !strings.Contains(string(raw), "Research Report: replicas") {
		t.Fatalf("tasks/result through B: %+v %s", rerr, raw)
	}
	if st, rerr := get(urlB, alice, task.TaskID); rerr != nil || st.Status != "completed" {
		t.Fatalf("tasks/get through B: %+v %+v", st, rerr)
	}
	for _, url := range []string{urlA, urlB} {
		_, unknown := get(url, bob, "0123456789abcdef0123456789abcdef")
		_, foreign := get(url, bob, task.TaskID)
		if unknown == nil || foreign == nil || *unknown != *foreign {
			t.Errorf("bob's tasks/get of alice's task: %+v, of an unknown one: %+v", foreign, unknown)
		}
	}

	busy := createTask(t, urlA, alice, `for (;;) {}`)
	raw, rerr = rawRPC(t, urlB, alice, "tasks/cancel", map[string]any{"taskId": busy.TaskID})
	if rerr != nil || !strings.Contains(string(raw), `"cancelled"`) {
		t.Fatalf("tasks/cancel through B: %+v %s", rerr, raw)
	}
	if st, rerr := get(urlA, alice, busy.TaskID); rerr != nil || st.Status != "cancelled" {
		t.Fatalf("tasks/get through A after the cancel on B: %+v %+v", st, rerr)
	}
	// The busy loop held alice's one slot: a next program runs only once A
	// has stopped it.
	raw, rerr = rawRPC(t, urlA, alice, "tools/call", map[string]any{"name": "call_tool_chain",
		"arguments": map[string]any{"code": "return 6 * 7"}})
	if rerr != nil || !strings.Contains(string(raw), "42") {
		t.Fatalf("a program after the cancel: %+v %s", rerr, raw)
	}
}
