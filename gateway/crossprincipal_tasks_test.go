package gateway

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/isogate/isogate/config"
	"github.com/isogate/isogate/internal/pipeline"
	"github.com/isogate/isogate/internal/resultstore/redistest"
	"github.com/isogate/isogate/internal/testutil"
)

// taskWire is how a tasks request is sent: the 2026-07-28 extension's wire
// (stateless, per-request _meta declaring the extension and elicitation,
// the Mcp-* routing headers), or 2025-11-25's, in session when session is
// set.
type taskWire struct {
	modern  bool
	session string
}

func (w taskWire) String() string {
	switch {
	case w.modern:
		return "2026-07-28"
	case w.session != "":
		return "2025-11-25 in session"
	}
	return "2025-11-25"
}

// rpcIDs numbers requests: a session refuses an id already in flight.
var rpcIDs atomic.Int64

// taskRPC posts one JSON-RPC request on wire w with who's token and
// returns its HTTP status and answer (from a JSON or an SSE body).
func taskRPC(ctx context.Context, url, who string, w taskWire, method string, params map[string]any) (int, rpcAnswer, error) {
	p := map[string]any{}
	for k, v := range params {
		p[k] = v
	}
	if w.modern {
		p["_meta"] = map[string]any{"io.modelcontextprotocol/protocolVersion": "2026-07-28",
			"io.modelcontextprotocol/clientInfo": map[string]any{"name": who, "version": "1"},
			"io.modelcontextprotocol/clientCapabilities": map[string]any{"elicitation": map[string]any{},
				"extensions": map[string]any{"io.modelcontextprotocol/tasks": map[string]any{}}}}
	}
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": rpcIDs.Add(1), "method": method, "params": p})
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second) // a failure bound: bob's answers come at once
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(string(body)))
	if err != nil {
		return 0, rpcAnswer{}, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer "+redteamTokens[who].Token)
	if w.modern {
		req.Header.Set("Mcp-Protocol-Version", "2026-07-28")
		req.Header.Set("Mcp-Method", method)
		if name, ok := params["name"].(string); ok {
			req.Header.Set("Mcp-Name", name)
		}
		if id, ok := params["taskId"].(string); ok {
			req.Header.Set("Mcp-Name", id)
		}
	} else {
		req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	}
	if w.session != "" {
		req.Header.Set("Mcp-Session-Id", w.session)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, rpcAnswer{}, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, rpcAnswer{}, err
	}
	for _, line := range strings.Split(string(data), "\n") {
		var a rpcAnswer
		if json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &a) == nil && (a.Result != nil || a.Error != nil) {
			return resp.StatusCode, a, nil
		}
	}
	return resp.StatusCode, rpcAnswer{Result: json.RawMessage(fmt.Sprintf("%q", strings.TrimSpace(string(data))))}, nil
}

// taskAttempt is one request of bob's naming a task of alice's.
type taskAttempt struct {
	url    string
	wire   taskWire
	method string
	params map[string]any // besides taskId
}

// attackTasks sends every attempt for each of alice's task ids, all at
// once, with bob's token, and the same for an id of the same shape naming
// nothing: each answer must be an error and the same as the unknown id's
// (status and body, the ids scrubbed). tasks/list (either wire) must not
// name any of the ids.
func attackTasks(t *testing.T, ids []string, attempts []taskAttempt) {
	t.Helper()
	ctx := t.Context()
	scrub := func(code int, a rpcAnswer, id string) string {
		b, _ := json.Marshal(a)
		return fmt.Sprintf("%d %s", code, strings.ReplaceAll(string(b), id, "ID"))
	}
	var wg sync.WaitGroup
	failures := make(chan string, 4*len(ids)*len(attempts))
	for _, id := range ids {
		for _, a := range attempts {
			wg.Add(1)
			go func() {
				defer wg.Done()
				ask := func(id string) (string, bool) {
					params := map[string]any{}
					for k, v := range a.params {
						params[k] = v
					}
					if a.method != "tasks/list" {
						params["taskId"] = id
					}
					code, got, err := taskRPC(ctx, a.url, "bob", a.wire, a.method, params)
					if err != nil {
						failures <- fmt.Sprintf("bob's %s (%s): %v", a.method, a.wire, err)
						return "", false
					}
					if a.method == "tasks/list" {
						for _, other := range ids {
							if strings.Contains(string(got.Result), other) {
								failures <- fmt.Sprintf("bob's tasks/list (%s) through %s names alice's task: %s", a.wire, a.url, got.Result)
							}
						}
						return "", false
					}
					return scrub(code, got, id), got.Error != nil || code >= 400
				}
				got, refused := ask(id)
				if got == "" {
					return
				}
				unknown, _ := ask(otherID(id))
				if !refused || got != unknown {
					failures <- fmt.Sprintf("bob's %s (%s) of alice's task through %s: %s; want as for an unknown task: %s",
						a.method, a.wire, a.url, got, unknown)
				}
			}()
		}
	}
	wg.Wait()
	close(failures)
	for f := range failures {
		t.Error(f)
	}
}

// modernStatus reads alice's task id on the 2026-07-28 wire: its status
// and its outstanding input requests.
func modernStatus(t *testing.T, url, id string) (string, string) {
	t.Helper()
	_, a, err := taskRPC(t.Context(), url, "alice", taskWire{modern: true}, "tasks/get", map[string]any{"taskId": id})
	var mt struct {
		Status        string          `json:"status"`
		InputRequests json.RawMessage `json:"inputRequests"`
	}
	if err != nil || a.Error != nil || json.Unmarshal(a.Result, &mt) != nil {
		t.Fatalf("alice's tasks/get of %s: %v %+v %s", id, err, a.Error, a.Result)
	}
	return mt.Status, string(mt.InputRequests)
}

// TestTasksExtensionKeepsTasksToTheirPrincipal: two stateless replicas on
// one real redis-server, alice and bob token principals. Alice has two
// tasks in flight: a 2026-07-28 task of the tasks extension waiting in
// input_required for the approval of counter.pay (on replica A, where
// tasks/update would hand it an answer), and a 2025-11-25 task busy in a
// loop (on B). Bob, knowing both ids and the approval's key, sends through
// both replicas, all at once, on the 2026-07-28 wire tasks/get,
// tasks/update (accepting the approval), tasks/cancel and tasks/list, and
// on the 2025-11-25 wire tasks/get, tasks/result, tasks/cancel and
// tasks/list: each answer is exactly an unknown task's, no list names
// them, counter.pay is not called, alice's approval is still outstanding
// and her loop still working. Alice's own tasks/update then runs pay once.
func TestTasksExtensionKeepsTasksToTheirPrincipal(t *testing.T) {
	srv := redistest.ForTest(t)
	counter := newCountingBackend()
	urlA, urlB := redteamReplica(t, srv.URL(), counter), redteamReplica(t, srv.URL(), counter)
	modern, legacy := taskWire{modern: true}, taskWire{}
	ctx := t.Context()

	_, created, err := taskRPC(ctx, urlA, "alice", modern, "tools/call", map[string]any{"name": "call_tool_chain",
		"arguments": map[string]any{"code": `const r = await counter.pay({}); return "paid " + r.n`}})
	var pay struct {
		ResultType string `json:"resultType"`
		TaskID     string `json:"taskId"`
	}
	if err != nil || created.Error != nil || json.Unmarshal(created.Result, &pay) != nil || pay.ResultType != "task" {
		t.Fatalf("alice's 2026-07-28 task: %v %+v %s", err, created.Error, created.Result)
	}
	var inputs string
	testutil.Eventually(t, 30*time.Second, func() bool {
		var status string
		status, inputs = modernStatus(t, urlB, pay.TaskID)
		return status == "input_required"
	}, "alice's task never asked for its approval")
	var asked map[string]json.RawMessage
	if err := json.Unmarshal([]byte(inputs), &asked); err != nil || len(asked) != 1 {
		t.Fatalf("alice's task's input requests: %s", inputs)
	}
	var key string
	for k := range asked {
		key = k
	}
	_, created, err = taskRPC(ctx, urlB, "alice", legacy, "tools/call", map[string]any{"name": "call_tool_chain",
		"arguments": map[string]any{"code": "for (;;) {}"}, "task": map[string]any{"ttl": 120000}})
	var loop struct {
		Task struct {
			TaskID string `json:"taskId"`
		} `json:"task"`
	}
	if err != nil || created.Error != nil || json.Unmarshal(created.Result, &loop) != nil || loop.Task.TaskID == "" {
		t.Fatalf("alice's 2025-11-25 task: %v %+v %s", err, created.Error, created.Result)
	}
	before := counter.count()

	accept := map[string]any{"inputResponses": map[string]any{key: map[string]any{"action": "accept", "content": map[string]any{}}}}
	var attempts []taskAttempt
	for _, url := range []string{urlA, urlB} {
		attempts = append(attempts,
			taskAttempt{url, modern, "tasks/get", nil},
			taskAttempt{url, modern, "tasks/update", accept},
			taskAttempt{url, modern, "tasks/cancel", nil},
			taskAttempt{url, modern, "tasks/list", nil},
			taskAttempt{url, legacy, "tasks/get", nil},
			taskAttempt{url, legacy, "tasks/result", nil},
			taskAttempt{url, legacy, "tasks/cancel", nil},
			taskAttempt{url, legacy, "tasks/list", nil})
	}
	attackTasks(t, []string{pay.TaskID, loop.Task.TaskID}, attempts)

	if n := counter.count(); n != before {
		t.Errorf("after bob's attempts the backend counted %d calls, want %d: bob's answer approved alice's pay", n, before)
	}
	if status, in := modernStatus(t, urlA, pay.TaskID); status != "input_required" || !strings.Contains(in, key) {
		t.Errorf("alice's paying task after bob's attempts: %s %s; want still waiting for %s", status, in, key)
	}
	if status, _ := modernStatus(t, urlB, loop.Task.TaskID); status != "working" {
		t.Errorf("alice's loop after bob's attempts: %s, want working", status)
	}

	if _, a, err := taskRPC(ctx, urlA, "alice", modern, "tasks/update", map[string]any{"taskId": pay.TaskID,
		"inputResponses": accept["inputResponses"]}); err != nil || a.Error != nil {
		t.Fatalf("alice answers her approval: %v %+v", err, a.Error)
	}
	testutil.Eventually(t, 30*time.Second, func() bool {
		status, _ := modernStatus(t, urlB, pay.TaskID)
		return status == "completed"
	}, "alice's approved task never completed")
	if n := counter.count(); n != before+1 {
		t.Errorf("after alice's approval the backend counted %d calls, want %d", n, before+1)
	}
	if _, a, err := taskRPC(ctx, urlA, "alice", legacy, "tasks/cancel", map[string]any{"taskId": loop.Task.TaskID}); err != nil || a.Error != nil {
		t.Fatalf("alice cancels her loop: %v %+v", err, a.Error)
	}
}

// TestSessionTasksKeepToTheirPrincipal: a gateway with sessions, alice
// and bob token principals, local.echo under approval. Alice, in her
// session (declaring elicitation), has a task waiting in input_required
// for the approval of local.echo (held for her tasks/result) and a task
// blocked in local.block. Bob, in his own session (declaring elicitation
// too), sends tasks/get, tasks/result, tasks/cancel and tasks/list, and
// the 2026-07-28 wire's tasks/get, tasks/update and tasks/cancel, all at
// once, naming her tasks: each answer is exactly an unknown task's, no
// list names them, bob is never sent her approval, and her tasks are as
// they were.
func TestSessionTasksKeepToTheirPrincipal(t *testing.T) {
	h := redteamGateway(t, nil)
	h.g.app.Policy.Replace(pipeline.NewPolicy(map[string]config.Backend{"local": {Tools: config.ToolPolicy{Approve: []string{"echo"}}}}))
	var bobAsked atomic.Int32
	alice := h.connectAsWith(t, "alice", "2025-11-25", &mcp.ClientOptions{
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: "decline"}, nil
		}})
	bob := h.connectAsWith(t, "bob", "2025-11-25", &mcp.ClientOptions{
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			bobAsked.Add(1)
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{}}, nil
		}})
	aliceWire, bobWire := taskWire{session: alice.ID()}, taskWire{session: bob.ID()}
	ctx := t.Context()
	create := func(code string) string {
		t.Helper()
		_, a, err := taskRPC(ctx, h.url, "alice", aliceWire, "tools/call", map[string]any{"name": "call_tool_chain",
			"arguments": map[string]any{"code": code}, "task": map[string]any{"ttl": 120000}})
		var ct struct {
			Task struct {
				TaskID string `json:"taskId"`
			} `json:"task"`
		}
		if err != nil || a.Error != nil || json.Unmarshal(a.Result, &ct) != nil || ct.Task.TaskID == "" {
			t.Fatalf("alice's task: %v %+v %s", err, a.Error, a.Result)
		}
		return ct.Task.TaskID
	}
	status := func(id string) string {
		t.Helper()
		_, a, err := taskRPC(ctx, h.url, "alice", aliceWire, "tasks/get", map[string]any{"taskId": id})
		var task struct {
			Status string `json:"status"`
		}
		if err != nil || a.Error != nil || json.Unmarshal(a.Result, &task) != nil {
			t.Fatalf("alice's tasks/get: %v %+v %s", err, a.Error, a.Result)
		}
		return task.Status
	}
	echo := create(`return await local.echo({secret: "alice-secret"})`)
	testutil.Eventually(t, 30*time.Second, func() bool { return status(echo) == "input_required" },
		"alice's task never asked for its approval")
	block := create(`return await local.block({})`)
	<-h.started

	accept := map[string]any{"inputResponses": map[string]any{"approval-1": map[string]any{"action": "accept", "content": map[string]any{}}}}
	modernBob := taskWire{modern: true, session: bob.ID()}
	attackTasks(t, []string{echo, block}, []taskAttempt{
		{h.url, bobWire, "tasks/get", nil},
		{h.url, bobWire, "tasks/result", nil},
		{h.url, bobWire, "tasks/cancel", nil},
		{h.url, bobWire, "tasks/list", nil},
		{h.url, modernBob, "tasks/get", nil},
		{h.url, modernBob, "tasks/update", accept},
		{h.url, modernBob, "tasks/cancel", nil},
	})
	if n := bobAsked.Load(); n != 0 {
		t.Errorf("bob was sent %d of alice's approvals", n)
	}
	if s := status(echo); s != "input_required" {
		t.Errorf("alice's approval task after bob's attempts: %s, want input_required", s)
	}
	if s := status(block); s != "working" {
		t.Errorf("alice's blocked task after bob's attempts: %s, want working", s)
	}
	for _, id := range []string{echo, block} {
		if _, a, err := taskRPC(ctx, h.url, "alice", aliceWire, "tasks/cancel", map[string]any{"taskId": id}); err != nil || a.Error != nil {
			t.Fatalf("alice cancels her task: %v %+v", err, a.Error)
		}
	}
}
