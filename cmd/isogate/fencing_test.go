package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/isogate/isogate/internal/resultstore/redistest"
	"github.com/isogate/isogate/internal/testutil"
)

// redisGate is a TCP proxy in front of a redis-server that the test can
// pause: while paused it forwards no byte either way, so that the replica
// behind it cannot reach the store (its requests wait), deterministically.
type redisGate struct {
	addr string
	mu   sync.Mutex
	open chan struct{} // closed while bytes flow
}

func newRedisGate(t *testing.T, target string) *redisGate {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	g := &redisGate{addr: ln.Addr().String(), open: make(chan struct{})}
	close(g.open)
	var conns sync.WaitGroup
	t.Cleanup(func() {
		ln.Close()
		g.resume()
	})
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			up, err := net.Dial("tcp", target)
			if err != nil {
				c.Close()
				continue
			}
			conns.Add(2)
			go g.pipe(&conns, up, c)
			go g.pipe(&conns, c, up)
		}
	}()
	return g
}

// pipe copies src to dst, holding each chunk while the gate is paused.
func (g *redisGate) pipe(wg *sync.WaitGroup, dst, src net.Conn) {
	defer wg.Done()
	defer dst.Close()
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			g.mu.Lock()
			open := g.open
			g.mu.Unlock()
			<-open
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

func (g *redisGate) pause() {
	g.mu.Lock()
	defer g.mu.Unlock()
	select {
	case <-g.open:
		g.open = make(chan struct{})
	default:
	}
}

func (g *redisGate) resume() {
	g.mu.Lock()
	defer g.mu.Unlock()
	select {
	case <-g.open:
	default:
		close(g.open)
	}
}

// numberedBackend serves step({n}) (a side effect) and wait()
// (idempotentHint), counting each call by key; every wait call is held
// until the test releases it by its number (1, 2, …), and reported on
// waits when it arrives. wait's reply names its number ("waited-2"), so
// that an outcome says whose wait it saw.
type numberedBackend struct {
	url   string
	waits chan int

	mu       sync.Mutex
	counts   map[string]int
	releases map[int]chan struct{}
}

func newNumberedBackend(t *testing.T) *numberedBackend {
	t.Helper()
	b := &numberedBackend{waits: make(chan int, 8), counts: map[string]int{}, releases: map[int]chan struct{}{}}
	srv := mcp.NewServer(&mcp.Implementation{Name: "counter"}, nil)
	mcp.AddTool(srv, &mcp.Tool{Name: "step", Description: "one step with a side effect"},
		func(_ context.Context, _ *mcp.CallToolRequest, in stepArgs) (*mcp.CallToolResult, any, error) {
			b.mu.Lock()
			b.counts[fmt.Sprintf("step-%d", in.N)]++
			b.mu.Unlock()
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprint(in.N * 10)}}}, nil, nil
		})
	mcp.AddTool(srv, &mcp.Tool{Name: "wait", Description: "waits; no side effect",
		Annotations: &mcp.ToolAnnotations{IdempotentHint: true, ReadOnlyHint: true}},
		func(ctx context.Context, _ *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
			b.mu.Lock()
			b.counts["wait"]++
			n := b.counts["wait"]
			release := b.release(n)
			b.mu.Unlock()
			b.waits <- n
			select {
			case <-release:
			case <-ctx.Done():
				return nil, nil, ctx.Err()
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf("waited-%d", n)}}}, nil, nil
		})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hs := &http.Server{Handler: mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)}
	go hs.Serve(ln)
	t.Cleanup(func() {
		b.mu.Lock()
		for n := 1; n <= 8; n++ {
			b.releaseLocked(n)
		}
		b.mu.Unlock()
		hs.Close()
	})
	b.url = "http://" + ln.Addr().String() + "/mcp"
	return b
}

// release is the channel that releases wait call n (b.mu held).
func (b *numberedBackend) release(n int) chan struct{} {
	if b.releases[n] == nil {
		b.releases[n] = make(chan struct{})
	}
	return b.releases[n]
}

func (b *numberedBackend) releaseLocked(n int) {
	ch := b.release(n)
	select {
	case <-ch:
	default:
		close(ch)
	}
}

// let releases wait call n.
func (b *numberedBackend) let(n int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.releaseLocked(n)
}

// arrived waits (bounded) for wait call n to reach the backend.
func (b *numberedBackend) arrived(t *testing.T, n int) {
	t.Helper()
	select {
	case got := <-b.waits:
		if got != n {
			t.Fatalf("wait call %d arrived, want %d", got, n)
		}
	case <-time.After(90 * time.Second):
		t.Fatalf("wait call %d never reached the backend", n)
	}
}

func (b *numberedBackend) count(key string) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.counts[key]
}

// TestFrozenReplicaIsFenced: two real isogate replicas (stateless, a real
// redis-server, store.lease_ttl 2s), one counting backend. Alice's program
// runs as a task on A and waits in a held call; A is frozen (SIGSTOP) past
// its lease; B takes the task over; A is thawed (SIGCONT) and its held
// call returns. No wait is timed: each step waits for an event (a call
// arriving, the task's status through B, A's log).
//   - durability off: B fails the task REPLICA_LOST. A thaws while its
//     store is unreachable (a paused proxy: its heartbeat cannot tell it
//     yet that the lease is gone, deterministically) and its program goes
//     on to step 3: the fence, past half a lease without a confirmed
//     renewal, asks the store before sending it, waits, learns the task
//     was taken, and refuses the call. Step 3 and 4 never reach the
//     backend; the task stays B's REPLICA_LOST. (Without the fence A sent
//     step 3 for a task it no longer held.)
//   - durable all: B replays steps 1–2 and re-sends the idempotent wait,
//     held too, so B still runs the task when A thaws. A's wait returns
//     (waited-1); A stops without a further call or write; B's wait then
//     returns and B completes: the task's outcome is B's (waited-2), every
//     step made once.
func TestFrozenReplicaIsFenced(t *testing.T) {
	srv := redistest.ForTest(t)
	const alice = "alice-fencing-token"
	env := func(redisURL, durable string) []string {
		return []string{"ISOGATE_SERVER__STATELESS=true", "ISOGATE_STORE__REDIS_URL=" + redisURL,
			"ISOGATE_STORE__HMAC_KEY=fencing-hmac-key-0123456789", "ISOGATE_STORE__LEASE_TTL=2s",
			"ISOGATE_SANDBOX__DURABLE=" + durable,
			"ISOGATE_SERVER__AUTH__MODE=token", "ISOGATE_SERVER__AUTH__TOKENS__ALICE__TOKEN=" + alice}
	}
	const program = `const out = [];
for (let i = 1; i <= 2; i++) out.push(await counter.step({n: i}));
const w = await counter.wait({});
for (let i = 3; i <= 4; i++) out.push(await counter.step({n: i}));
return "steps " + out.join(",") + " " + w;`
	status := func(t *testing.T, url, id string) taskState {
		t.Helper()
		raw, rerr := rawRPC(t, url, alice, "tasks/get", map[string]any{"taskId": id})
		var st taskState
		if rerr != nil || json.Unmarshal(raw, &st) != nil {
			t.Fatalf("tasks/get: %+v %s", rerr, raw)
		}
		return st
	}
	stopped := func(logs fmt.Stringer) bool { return strings.Contains(logs.String(), "stopped here") }

	t.Run("durability off", func(t *testing.T) {
		backend := newNumberedBackend(t)
		cfg := takeoverConfig(t, backend.url)
		gate := newRedisGate(t, strings.TrimSuffix(strings.TrimPrefix(srv.URL(), "redis://"), "/0"))
		urlA, procA, logsA := startHTTPLogged(t, cfg, env("redis://"+gate.addr+"/0", "off")...)
		urlB, _ := startHTTPProcess(t, cfg, env(srv.URL(), "off")...)

		task := createTask(t, urlA, alice, program)
		backend.arrived(t, 1)
		if err := procA.Process.Signal(syscall.SIGSTOP); err != nil {
			t.Fatal(err)
		}
		thawed := false
		defer func() {
			if !thawed {
				_ = procA.Process.Signal(syscall.SIGCONT)
			}
		}()
		testutil.Eventually(t, 60*time.Second, func() bool { return status(t, urlB, task.TaskID).Status == "failed" },
			"B never took the task over")
		gate.pause()
		if err := procA.Process.Signal(syscall.SIGCONT); err != nil {
			t.Fatal(err)
		}
		thawed = true
		backend.let(1) // A's wait returns to A
		testutil.Eventually(t, 60*time.Second, func() bool {
			return backend.count("step-3") > 0 || strings.Contains(logsA.String(), "confirming it before acting")
		}, "A's program never went on after its wait:\n%s", logsA)
		gate.resume()
		testutil.Eventually(t, 60*time.Second, func() bool { return stopped(logsA) }, "A never noticed the takeover:\n%s", logsA)
		for _, key := range []string{"step-3", "step-4"} {
			if n := backend.count(key); n != 0 {
				t.Errorf("the backend received %s %d times after A lost the task, want 0", key, n)
			}
		}
		for _, url := range []string{urlA, urlB} {
			if st := status(t, url, task.TaskID); st.Status != "failed" || !strings.Contains(st.StatusMessage, "REPLICA_LOST") {
				t.Errorf("the task through %s: %+v; want B's REPLICA_LOST", url, st)
			}
		}
	})

	t.Run("durable, B still running", func(t *testing.T) {
		backend := newNumberedBackend(t)
		cfg := takeoverConfig(t, backend.url)
		urlA, procA, logsA := startHTTPLogged(t, cfg, env(srv.URL(), "all")...)
		urlB, _ := startHTTPProcess(t, cfg, env(srv.URL(), "all")...)

		task := createTask(t, urlA, alice, program)
		backend.arrived(t, 1)
		if err := procA.Process.Signal(syscall.SIGSTOP); err != nil {
			t.Fatal(err)
		}
		thawed := false
		defer func() {
			if !thawed {
				_ = procA.Process.Signal(syscall.SIGCONT)
			}
		}()
		backend.arrived(t, 2) // B took the task over and re-sent the wait
		if err := procA.Process.Signal(syscall.SIGCONT); err != nil {
			t.Fatal(err)
		}
		thawed = true
		backend.let(1)
		testutil.Eventually(t, 60*time.Second, func() bool { return stopped(logsA) }, "A never noticed the takeover:\n%s", logsA)
		if n := backend.count("step-3"); n != 0 {
			t.Errorf("step 3 was sent %d times while B waited: A acted for a task it no longer held", n)
		}
		if st := status(t, urlB, task.TaskID); st.Status != "working" {
			t.Errorf("the task after A thawed, before B's wait returned: %+v; want B's, still working", st)
		}
		backend.let(2)
		raw, rerr := rawRPC(t, urlB, alice, "tasks/result", map[string]any{"taskId": task.TaskID})
		if rerr != nil || !strings.Contains(string(raw), "steps 10,20,30,40 waited-2") {
			t.Fatalf("tasks/result through B: %+v %s; want B's outcome (waited-2)", rerr, raw)
		}
		raw, rerr = rawRPC(t, urlA, alice, "tasks/result", map[string]any{"taskId": task.TaskID})
		if rerr != nil || !strings.Contains(string(raw), "waited-2") {
			t.Errorf("tasks/result through A: %+v %s; want B's outcome", rerr, raw)
		}
		for key, want := range map[string]int{"step-1": 1, "step-2": 1, "wait": 2, "step-3": 1, "step-4": 1} {
			if n := backend.count(key); n != want {
				t.Errorf("the backend received %s %d times, want %d", key, n, want)
			}
		}
	})
}
