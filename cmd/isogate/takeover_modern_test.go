package main

import (
	"encoding/json"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/isogate/isogate/internal/resultstore/redistest"
)

// TestModernTaskSurvivesItsReplica is TestTaskSurvivesItsReplica for a
// 2026-07-28 client (the io.modelcontextprotocol/tasks extension, no
// session): a program started as a task through A, A SIGKILLed while the
// backend holds one of its calls, the task polled with tasks/get through
// B until it ends.
//   - A dies between side effects (in an idempotent wait): B takes the
//     task over and replays it; the task completes with every step made
//     once (not REPLICA_LOST: the run's journal is the task's).
//   - A dies in the middle of step 3: the task ends with CALL_INDETERMINATE
//     naming call #3 (on this wire a tool's error result is "completed"
//     with isError); step 3 is not sent again, step 4 never.
func TestModernTaskSurvivesItsReplica(t *testing.T) {
	srv := redistest.ForTest(t)
	const alice = "alice-takeover-token"
	env := takeoverEnv(srv.URL(), takeoverHMACKey, "all", alice)
	for _, tc := range []struct {
		name, hold, code, wantStatus, want string
		counts                             map[string]int
	}{
		{"between calls", "wait", `const out = [];
for (let i = 1; i <= 2; i++) out.push(await counter.step({n: i}));
await counter.wait({});
for (let i = 3; i <= 4; i++) out.push(await counter.step({n: i}));
return "steps " + out.join(",") + " clock " + (Date.now() > 0) + " random " + (Math.random() < 1);`,
			"completed", "steps 10,20,30,40 clock true random true",
			map[string]int{"step-1": 1, "step-2": 1, "wait": 2, "step-3": 1, "step-4": 1}},
		{"mid-call", "step-3", `const out = [];
for (let i = 1; i <= 4; i++) out.push(await counter.step({n: i}));
return "steps " + out.join(",");`, "completed", "CALL_INDETERMINATE",
			map[string]int{"step-1": 1, "step-2": 1, "step-3": 1, "step-4": 0}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			backend := newCountingBackend(t, tc.hold)
			cfg := takeoverConfig(t, backend.url)
			urlA, procA := startHTTPProcess(t, cfg, env...)
			urlB, _ := startHTTPProcess(t, cfg, env...)

			_, raw, rerr := modernRPC(t, urlA, alice, "tools/call", map[string]any{"name": "call_tool_chain",
				"arguments": map[string]any{"code": tc.code}}, true, nil)
			var created modernTask
			if rerr != nil || json.Unmarshal(raw, &created) != nil || created.ResultType != "task" {
				t.Fatalf("CreateTaskResult: %+v %s", rerr, raw)
			}
			backend.waitHeld(t)
			backend.endWhileHeld(t, procA, syscall.SIGKILL)

			var done modernTask
			for deadline := time.Now().Add(60 * time.Second); ; {
				_, raw, rerr := modernRPC(t, urlB, alice, "tasks/get", map[string]any{"taskId": created.TaskID}, true, nil)
				if rerr != nil || json.Unmarshal(raw, &done) != nil {
					t.Fatalf("tasks/get through B: %+v %s", rerr, raw)
				}
				if done.Status != "working" || time.Now().After(deadline) {
					break
				}
				time.Sleep(200 * time.Millisecond) // a client's poll interval, not synchronisation
			}
			t.Logf("tasks/get through B: %+v %s", done, done.Result)
			if done.Status != tc.wantStatus {
				t.Errorf("task status %q (%s), want %q", done.Status, done.StatusMessage, tc.wantStatus)
			}
			if !strings.Contains(string(done.Result), tc.want) {
				t.Errorf("task result %s, want %q in it", done.Result, tc.want)
			}
			if tc.want == "CALL_INDETERMINATE" && (!strings.Contains(string(done.Result), "#3, counter.step") ||
				!strings.Contains(string(done.Result), `"isError":true`)) {
				t.Errorf("the failure is not an error naming call #3, counter.step: %s", done.Result)
			}
			backend.wantCounts(t, tc.counts)
		})
	}
}

// TestModernDurableTaskApproval: a 2026-07-28 task journalled with
// sandbox.durable: all (on Redis) whose program needs an approval pauses
// in input_required (its journal, with the approval asked, appended to the
// task's journal under a pause token) and, once tasks/update approves,
// continues on the same replica from memory: every step made once.
func TestModernDurableTaskApproval(t *testing.T) {
	srv := redistest.ForTest(t)
	const alice = "alice-takeover-token"
	backend := newCountingBackend(t, "")
	cfg := takeoverConfig(t, backend.url)
	raw, err := os.ReadFile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	approving := strings.Replace(string(raw), "    url: "+backend.url+"\n", "    url: "+backend.url+"\n    tools:\n      approve: [wait]\n", 1)
	if err := os.WriteFile(cfg, []byte(approving), 0o600); err != nil {
		t.Fatal(err)
	}
	url, _ := startHTTPProcess(t, cfg, "ISOGATE_SERVER__STATELESS=true", "ISOGATE_STORE__REDIS_URL="+srv.URL(),
		"ISOGATE_STORE__HMAC_KEY=takeover-hmac-key-0123456789", "ISOGATE_SANDBOX__DURABLE=all",
		"ISOGATE_SERVER__AUTH__MODE=token", "ISOGATE_SERVER__AUTH__TOKENS__ALICE__TOKEN="+alice)
	_, res, rerr := modernRPC(t, url, alice, "tools/call", map[string]any{"name": "call_tool_chain",
		"arguments": map[string]any{"code": `const out = [];
for (let i = 1; i <= 2; i++) out.push(await counter.step({n: i}));
await counter.wait({});
out.push(await counter.step({n: 3}));
return "steps " + out.join(",");`}}, true, nil)
	var created modernTask
	if rerr != nil || json.Unmarshal(res, &created) != nil || created.ResultType != "task" {
		t.Fatalf("CreateTaskResult: %+v %s", rerr, res)
	}
	poll := func(until func(modernTask) bool) modernTask {
		t.Helper()
		for deadline := time.Now().Add(60 * time.Second); ; {
			_, raw, rerr := modernRPC(t, url, alice, "tasks/get", map[string]any{"taskId": created.TaskID}, true, nil)
			var mt modernTask
			if rerr != nil || json.Unmarshal(raw, &mt) != nil {
				t.Fatalf("tasks/get: %+v %s", rerr, raw)
			}
			if until(mt) || time.Now().After(deadline) {
				return mt
			}
			time.Sleep(100 * time.Millisecond) // a client's poll interval, not synchronisation
		}
	}
	waiting := poll(func(mt modernTask) bool { return mt.Status != "working" })
	var requests map[string]json.RawMessage
	if waiting.Status != "input_required" || json.Unmarshal(waiting.InputRequests, &requests) != nil || len(requests) != 1 {
		t.Fatalf("the task waiting for its approval: %+v %s", waiting, waiting.InputRequests)
	}
	answers := map[string]any{}
	for k := range requests {
		answers[k] = map[string]any{"action": "accept", "content": map[string]any{}}
	}
	if _, raw, rerr := modernRPC(t, url, alice, "tasks/update", map[string]any{"taskId": created.TaskID, "inputResponses": answers}, true, nil); rerr != nil {
		t.Fatalf("tasks/update: %+v %s", rerr, raw)
	}
	done := poll(func(mt modernTask) bool { return mt.Status != "working" && mt.Status != "input_required" })
	if done.Status != "completed" || !strings.Contains(string(done.Result), "steps 10,20,30") {
		t.Fatalf("the approved task: %+v %s", done, done.Result)
	}
	backend.wantCounts(t, map[string]int{"step-1": 1, "step-2": 1, "wait": 1, "step-3": 1})
}
