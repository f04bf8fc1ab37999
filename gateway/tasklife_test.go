package gateway

import (
	"context"
	"encoding/json"
	"net"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/isogate/isogate/config"
	"github.com/isogate/isogate/internal/app"
	"github.com/isogate/isogate/internal/backend"
	"github.com/isogate/isogate/internal/resultstore"
	"github.com/isogate/isogate/internal/resultstore/redistest"
	"github.com/isogate/isogate/internal/tasks"
	"github.com/isogate/isogate/internal/testutil"
	"github.com/isogate/isogate/v8sandbox"
)

// leasedReplica is a stateless replica on the shared Redis running
// call_tool_chain tasks durably (sandbox.durable: all) under leases of
// store.lease_ttl 1s, with alice and bob as token principals; it returns
// the replica's /mcp URL and the replica. A sweeping replica serves
// through ServeHTTP, and so takes over the tasks whose lease lapsed; the
// other one serves its handler only (the replica the tests lose: it takes
// nothing over).
func leasedReplica(t *testing.T, redisURL string, counter *countingBackend, sweeping bool) (string, *Gateway) {
	t.Helper()
	cfg := config.Default()
	cfg.Server.CacheDir = t.TempDir()
	cfg.Server.Stateless = true
	cfg.Server.Auth.Mode = config.AuthToken
	cfg.Server.Auth.Tokens = redteamTokens
	cfg.Store.RedisURL = redisURL
	cfg.Store.HMACKey = "tasklife-test-hmac-key-0123456789"
	cfg.Store.LeaseTTL = time.Second
	cfg.Sandbox.Durable = "all"
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	pool := v8sandbox.NewPool(v8sandbox.Options{Workers: 2})
	t.Cleanup(func() { go pool.Close() }) // see durableReplicaOf
	g := startHealthy(t, cfg, app.Options{Runner: pool, ExtraSpecs: []backend.Spec{backend.InMemory("counter", counter.server)}})
	if sweeping {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		served := make(chan struct{})
		go func() { defer close(served); _ = g.ServeHTTP(ctx, ln) }()
		t.Cleanup(func() { cancel(); <-served })
		return "http://" + ln.Addr().String() + "/mcp", g
	}
	srv := httptest.NewServer(g.HTTPHandler())
	t.Cleanup(srv.Close)
	return srv.URL + "/mcp", g
}

// stepHook acts once, at the n-th time a task of the replica reaches step
// (then each later step goes on), and once more at then (TaskKill, when
// set) after that.
type stepHook struct {
	step TaskStepAt
	then tasks.TaskStep // "": nothing after

	mu   sync.Mutex
	seen int
	did  bool
}

// TaskStepAt is the n-th arrival of a task at step, and the act there.
type TaskStepAt struct {
	Step tasks.TaskStep
	N    int
	Act  tasks.TaskAct
}

func (h *stepHook) hook(step tasks.TaskStep, _ string) tasks.TaskAct {
	h.mu.Lock()
	defer h.mu.Unlock()
	switch {
	case !h.did && step == h.step.Step:
		if h.seen++; h.seen == h.step.N {
			h.did = true
			return h.step.Act
		}
	case h.did && h.then != "" && step == h.then:
		h.then = ""
		return tasks.TaskKill
	}
	return tasks.TaskGoOn
}

// twoBumps makes two calls with a side effect (counter.bump is not
// idempotent) and returns how many calls the backend had seen at each.
const twoBumps = `const a = (await counter.bump({i: 1})).n;
const b = (await counter.bump({i: 2})).n;
return "bumped " + (b - a);`

// TestTaskLostAtEachStepEndsTrue (issue 44, 2): a call_tool_chain task
// (two calls with a side effect) is started through replica A, and A is
// lost at one step of the task's life (a test hook stops it there as a
// SIGKILL would: nothing more is written for the task, its lease lapses);
// replica B takes the task over. Whatever the step, the task ends with
// the truth: completed (from its journal: no call made twice), or
// CALL_INDETERMINATE naming the call whose outcome is unknown, never
// REPLICA_LOST while its calls ran. The last two cases are the soak's
// (issue 44): a journal write the store refused (as after a pause past a
// store timeout) used to drop the journal and go on, and A lost after its
// calls then left "calls done, no journal, no outcome": REPLICA_LOST.
func TestTaskLostAtEachStepEndsTrue(t *testing.T) {
	srv := redistest.ForTest(t)
	counter := newCountingBackend()
	urlA, a := leasedReplica(t, srv.URL(), counter, false)
	urlB, _ := leasedReplica(t, srv.URL(), counter, true)
	// The journal writes of the task: 1 its begin, 2 call #1 started,
	// 3 #1 done, 4 #2 started, 5 #2 done.
	for _, tc := range []struct {
		name   string
		at     TaskStepAt
		then   tasks.TaskStep
		status string
		want   string // in the outcome
		calls  int    // backend calls the task made, all replicas
	}{
		{"created", TaskStepAt{tasks.StepCreated, 1, tasks.TaskKill}, "", "completed", "bumped 1", 2},
		{"before call 1 is journalled", TaskStepAt{tasks.StepJournalWrite, 2, tasks.TaskKill}, "", "completed", "bumped 1", 2},
		{"call 1 made, not journalled done", TaskStepAt{tasks.StepJournalWrite, 3, tasks.TaskKill}, "", "failed", "#1, counter.bump", 1},
		{"call 1 done", TaskStepAt{tasks.StepJournalWrite, 4, tasks.TaskKill}, "", "completed", "bumped 1", 2},
		{"run ended", TaskStepAt{tasks.StepRunEnded, 1, tasks.TaskKill}, "", "completed", "bumped 1", 2},
		{"outcome kept", TaskStepAt{tasks.StepOutcomeKept, 1, tasks.TaskKill}, "", "completed", "bumped 1", 2},
		{"journal refused after call 1, lost when the run ended", TaskStepAt{tasks.StepJournalWrite, 3, tasks.TaskFailWrite},
			tasks.StepRunEnded, "failed", "CALL_INDETERMINATE", 2},
		{"journal refused after call 2, lost when the run ended", TaskStepAt{tasks.StepJournalWrite, 5, tasks.TaskFailWrite},
			tasks.StepRunEnded, "failed", "CALL_INDETERMINATE", 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := &stepHook{step: tc.at, then: tc.then}
			a.app.Surface.SetTaskHook(h.hook)
			defer a.app.Surface.SetTaskHook(nil)
			before := counter.count()
			id := createChainTask(t, urlA, twoBumps)
			_, res, err := taskRPC(context.Background(), urlB, "alice", taskWire{}, "tasks/result", map[string]any{"taskId": id})
			if err != nil {
				t.Fatal(err)
			}
			_, got, err := taskRPC(context.Background(), urlB, "alice", taskWire{}, "tasks/get", map[string]any{"taskId": id})
			if err != nil {
				t.Fatal(err)
			}
			var st struct {
				Status        string `json:"status"`
				StatusMessage string `json:"statusMessage"`
			}
			_ = json.Unmarshal(got.Result, &st)
			t.Logf("tasks/result through B: %s %+v; %+v", res.Result, res.Error, st)
			if st.Status != tc.status {
				t.Errorf("task %s (%s), want %s", st.Status, st.StatusMessage, tc.status)
			}
			if !strings.Contains(string(res.Result), tc.want) {
				t.Errorf("outcome %s %+v, want %q in it", res.Result, res.Error, tc.want)
			}
			if strings.Contains(string(res.Result), "REPLICA_LOST") {
				t.Errorf("REPLICA_LOST for a task whose calls ran: %s", res.Result)
			}
			if n := counter.count() - before; n != tc.calls {
				t.Errorf("the backend received %d calls, want %d (none made twice)", n, tc.calls)
			}
		})
	}
}

// TestEveryTaskEnds (issue 44, 3): a call_tool_chain task (timeout 1 s)
// is started through replica A, and A is lost at one step of the task's
// life in a way no lease tells: at that step its lease is deleted from
// Redis (as a lease never written or lost) and A stops (a test hook, as a
// SIGKILL). The task still ends: polled through replica B it is failed
// with TASK_EXPIRED once past its deadline and a lease (not "working"
// until its TTL of 120 s); a task whose outcome was kept keeps it. Red
// before the fix: the lost tasks stayed "working" (the wait below ran out).
func TestEveryTaskEnds(t *testing.T) {
	srv := redistest.ForTest(t)
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr})
	defer rdb.Close()
	counter := newCountingBackend()
	urlA, a := leasedReplica(t, srv.URL(), counter, false)
	urlB, _ := leasedReplica(t, srv.URL(), counter, true)
	for _, tc := range []struct {
		name   string
		step   tasks.TaskStep
		n      int
		status string
		want   string
	}{
		{"created", tasks.StepCreated, 1, "failed", "TASK_EXPIRED"},
		{"first call started", tasks.StepJournalWrite, 2, "failed", "TASK_EXPIRED"},
		{"run ended", tasks.StepRunEnded, 1, "failed", "TASK_EXPIRED"},
		{"outcome kept", tasks.StepOutcomeKept, 1, "completed", "bumped 1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var seen atomic.Int32
			a.app.Surface.SetTaskHook(func(step tasks.TaskStep, id string) tasks.TaskAct {
				if step != tc.step || int(seen.Add(1)) != tc.n {
					return tasks.TaskGoOn
				}
				keys, err := rdb.Keys(context.Background(), resultstore.RedisKeyPrefix+"*leases:l:"+id).Result()
				if err == nil && len(keys) == 1 {
					err = rdb.Del(context.Background(), keys[0]).Err()
				}
				if err != nil || len(keys) != 1 {
					t.Errorf("deleting the task's lease: %v %q", err, keys)
				}
				return tasks.TaskKill
			})
			defer a.app.Surface.SetTaskHook(nil)
			id := createChainTaskWith(t, urlA, map[string]any{"code": twoBumps, "timeout": 1000})
			var st struct {
				Status        string `json:"status"`
				StatusMessage string `json:"statusMessage"`
			}
			testutil.Eventually(t, 30*time.Second, func() bool {
				_, got, err := taskRPC(context.Background(), urlB, "alice", taskWire{}, "tasks/get", map[string]any{"taskId": id})
				return err == nil && json.Unmarshal(got.Result, &st) == nil && st.Status != "working"
			}, "the task lost at %s never ended", tc.step)
			_, res, err := taskRPC(context.Background(), urlB, "alice", taskWire{}, "tasks/result", map[string]any{"taskId": id})
			if err != nil {
				t.Fatal(err)
			}
			if st.Status != tc.status || !strings.Contains(string(res.Result), tc.want) {
				t.Errorf("task %s (%s), result %s; want %s with %q", st.Status, st.StatusMessage, res.Result, tc.status, tc.want)
			}
		})
	}
}

// createChainTask starts code as alice's call_tool_chain task through url
// (2025-11-25 wire) and returns its id.
func createChainTask(t *testing.T, url, code string) string {
	t.Helper()
	return createChainTaskWith(t, url, map[string]any{"code": code})
}

// createChainTaskWith is createChainTask with call_tool_chain's arguments.
func createChainTaskWith(t *testing.T, url string, args map[string]any) string {
	t.Helper()
	_, a, err := taskRPC(context.Background(), url, "alice", taskWire{}, "tools/call", map[string]any{"name": "call_tool_chain",
		"arguments": args, "task": map[string]any{"ttl": 120000}})
	var created struct {
		Task struct {
			TaskID string `json:"taskId"`
		} `json:"task"`
	}
	if err != nil || a.Error != nil || json.Unmarshal(a.Result, &created) != nil || created.Task.TaskID == "" {
		t.Fatalf("creating the task: %v %+v %s", err, a.Error, a.Result)
	}
	return created.Task.TaskID
}

// TestJournalUnavailableStopsTheRun: a durable task whose journal the
// store refuses twice in a row (the write after its first call, then the
// entry that would say the run goes on without it) is stopped before its
// next call with JOURNAL_UNAVAILABLE: the journal no longer says what the
// run did, so no replica could tell which calls were made; the second call
// is never sent.
func TestJournalUnavailableStopsTheRun(t *testing.T) {
	srv := redistest.ForTest(t)
	counter := newCountingBackend()
	url, a := leasedReplica(t, srv.URL(), counter, false)
	// The journal writes of the task: 1 its begin, 2 call #1 started,
	// 3 #1 done (refused), 4 the undurable entry (refused).
	var writes atomic.Int32
	a.app.Surface.SetTaskHook(func(step tasks.TaskStep, id string) tasks.TaskAct {
		if step == tasks.StepJournalWrite && writes.Add(1) >= 3 {
			return tasks.TaskFailWrite
		}
		return tasks.TaskGoOn
	})
	defer a.app.Surface.SetTaskHook(nil)
	before := counter.count()
	id := createChainTask(t, url, twoBumps)
	_, res, err := taskRPC(context.Background(), url, "alice", taskWire{}, "tasks/result", map[string]any{"taskId": id})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(res.Result), "JOURNAL_UNAVAILABLE") {
		t.Errorf("outcome %s %+v, want JOURNAL_UNAVAILABLE", res.Result, res.Error)
	}
	if n := counter.count() - before; n != 1 {
		t.Errorf("the backend received %d calls, want 1 (the run stopped before its second)", n)
	}
}
