package main

import (
	"strings"
	"syscall"
	"testing"

	"github.com/isogate/isogate/internal/resultstore/redistest"
)

// TestTaskSurvivesGracefulStop: a replica stopped with SIGTERM (a rolling
// deploy), not killed, while a task's program waits in a backend call.
// Found in a tryout: the stop closed the backends first, the call in
// flight failed with BACKEND_CLOSED, that failure was journalled as the
// call's answer and kept as the task's outcome, so the task failed with
// BACKEND_CLOSED, a replica's shutdown, and the replica that took it over
// replayed the same failure. Now a stopping replica keeps no failure of a
// leased task and journals no BACKEND_CLOSED: with sandbox.durable: all
// the other replica takes the task over and completes it (the wait, idempotent, sent
// again; every side effect once); without durability the task fails with
// REPLICA_LOST, as for a replica that died.
func TestTaskSurvivesGracefulStop(t *testing.T) {
	srv := redistest.ForTest(t)
	const alice = "alice-takeover-token"
	const code = `const out = [];
for (let i = 1; i <= 2; i++) out.push(await counter.step({n: i}));
await counter.wait({});
for (let i = 3; i <= 4; i++) out.push(await counter.step({n: i}));
return "steps " + out.join(",");`
	for _, tc := range []struct {
		durable, status, want string
		counts                map[string]int
	}{
		{"all", "completed", "steps 10,20,30,40", map[string]int{"step-1": 1, "step-2": 1, "wait": 2, "step-3": 1, "step-4": 1}},
		{"off", "failed", "REPLICA_LOST", map[string]int{"step-1": 1, "step-2": 1, "wait": 1, "step-3": 0, "step-4": 0}},
	} {
		t.Run("durable "+tc.durable, func(t *testing.T) {
			env := takeoverEnv(srv.URL(), takeoverHMACKey, tc.durable, alice)
			backend := newCountingBackend(t, "wait")
			cfg := takeoverConfig(t, backend.url)
			urlA, procA := startHTTPProcess(t, cfg, env...)
			urlB, _ := startHTTPProcess(t, cfg, env...)
			task := createTask(t, urlA, alice, code)
			backend.waitHeld(t)
			backend.endWhileHeld(t, procA, syscall.SIGTERM)
			raw, rerr, st := askTask(t, urlB, alice, task.TaskID)
			if st.Status != tc.status || !strings.Contains(string(raw), tc.want) || strings.Contains(string(raw), "BACKEND_CLOSED") {
				t.Errorf("after a graceful stop: status %q (%s), result %s %+v; want %s with %q", st.Status, st.StatusMessage, raw, rerr, tc.status, tc.want)
			}
			backend.wantCounts(t, tc.counts)
		})
	}
}
