package procpool

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/isogate/isogate/v8sandbox"
)

// laneCalls sums the host calls served on the lanes of p's live workers.
func laneCalls(p *Pool) uint64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	var n uint64
	for pr := range p.procs {
		n += pr.laneCalls.Load()
	}
	return n
}

// TestHostCallsTakeLanes: sequential sync and async host calls travel on
// the call lanes, not the protocol pipe, and answer correctly.
func TestHostCallsTakeLanes(t *testing.T) {
	p := newTestPool(t, Options{Workers: 1, SlotsPerWorker: 1})
	host := v8sandbox.HostFunc(func(_ context.Context, name string, args json.RawMessage) (json.RawMessage, error) {
		return args, nil
	})
	job := v8sandbox.Job{
		Source:      `(async () => { let s = 0; for (let i = 1; i <= 5; i++) s += sync(i)[0] + (await later(i))[0]; return s })()`,
		AwaitResult: true,
		Functions:   []v8sandbox.Function{{Name: "sync"}, {Name: "later", Async: true}},
	}
	res, err := p.Run(context.Background(), job, host)
	if err != nil || string(res.Value) != "30" {
		t.Fatalf("got %s, %v; want 30", res.Value, err)
	}
	if n := laneCalls(p); n != 10 {
		t.Errorf("%d of 10 host calls went over lanes", n)
	}
}

// TestMoreCallsThanLanes: more async calls in flight than the worker has
// lanes; the rest take the protocol pipe, and every one is served
// concurrently (each waits until all have arrived).
func TestMoreCallsThanLanes(t *testing.T) {
	p := newTestPool(t, Options{Workers: 1, SlotsPerWorker: 1})
	const calls = 3 * maxLanes
	var mu sync.Mutex
	arrived := 0
	all := make(chan struct{})
	host := v8sandbox.HostFunc(func(ctx context.Context, _ string, args json.RawMessage) (json.RawMessage, error) {
		mu.Lock()
		if arrived++; arrived == calls {
			close(all)
		}
		mu.Unlock()
		select {
		case <-all:
			return args, nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	})
	job := v8sandbox.Job{
		Source:      `Promise.all(Array.from({length: ` + strconv.Itoa(calls) + `}, (_, i) => wait(i))).then((r) => r.reduce((s, [x]) => s + x, 0))`,
		AwaitResult: true,
		Functions:   []v8sandbox.Function{{Name: "wait", Async: true}},
	}
	res, err := p.Run(context.Background(), job, host)
	if want := strconv.Itoa(calls * (calls - 1) / 2); err != nil || string(res.Value) != want {
		t.Fatalf("got %s, %v; want %s", res.Value, err, want)
	}
	if n := laneCalls(p); n == 0 || n >= calls {
		t.Errorf("%d of %d calls on lanes; want some on lanes and the rest on the pipe", n, calls)
	}
}

// TestLaneCallPastTheDeadline: a sync host call still running at the run's
// deadline holds the worker's thread on its lane; the parent ends the
// host's work at the deadline, so the run ends with TIMEOUT and the worker
// (with its other runs) is not killed.
func TestLaneCallPastTheDeadline(t *testing.T) {
	// The grace only bounds how long the worker takes to answer once the
	// host's work ended: a worker held past the deadline is killed however
	// long it is, so a loaded machine must not make it expire.
	p := newTestPool(t, Options{Workers: 1, SlotsPerWorker: 1, Grace: 10 * time.Second})
	host := v8sandbox.HostFunc(func(ctx context.Context, _ string, _ json.RawMessage) (json.RawMessage, error) {
		<-ctx.Done()
		return nil, ctx.Err()
	})
	// The deadline must strike while block() is on its lane. On a loaded
	// machine it can strike before the worker made the call (a TIMEOUT
	// too, with no lane call): then try again with a longer one.
	for timeout := 100 * time.Millisecond; ; timeout *= 2 {
		before := laneCalls(p)
		job := v8sandbox.Job{Source: `block()`, Functions: []v8sandbox.Function{{Name: "block"}},
			Limits: v8sandbox.Limits{Timeout: timeout}}
		_, err := p.Run(context.Background(), job, host)
		if v8sandbox.CodeOf(err) != v8sandbox.CodeTimeout {
			t.Fatalf("got %v, want TIMEOUT", err)
		}
		if st := p.Stats(); st.Killed != 0 {
			t.Fatalf("the worker was killed (%+v)", st)
		}
		n := laneCalls(p) - before
		if n == 0 && timeout < 10*time.Second {
			t.Logf("the deadline of %v struck before block() was called; trying a longer one", timeout)
			continue
		}
		if n != 1 {
			t.Errorf("%d lane calls, want 1", n)
		}
		return
	}
}

// TestConcurrentLaneCalls: runs on every slot of a worker make calls at
// once, each reply carrying its own value; no reply reaches another call
// (a lane's buffer is reused only once its reply was consumed).
func TestConcurrentLaneCalls(t *testing.T) {
	p := newTestPool(t, Options{Workers: 1, SlotsPerWorker: 4})
	host := v8sandbox.HostFunc(func(_ context.Context, _ string, args json.RawMessage) (json.RawMessage, error) {
		return args, nil
	})
	job := v8sandbox.Job{
		Source:      `(async () => { let s = 0; for (let i = 0; i < 300; i++) s += echo("x".repeat(i % 40), i)[1] + (await later(i))[0]; return s })()`,
		AwaitResult: true,
		Functions:   []v8sandbox.Function{{Name: "echo"}, {Name: "later", Async: true}},
	}
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 3 {
				res, err := p.Run(context.Background(), job, host)
				if err != nil || string(res.Value) != "89700" {
					t.Errorf("got %s, %v; want 89700", res.Value, err)
					return
				}
			}
		})
	}
	wg.Wait()
}

// TestLaneReplyOutlivesTheLane: a reply's value stays intact after its
// lane served the next call (the value is read after the lane went back
// to the free list).
func TestLaneReplyOutlivesTheLane(t *testing.T) {
	replyR, replyW, callR, callW := lanePipes(t)
	l := openLane(int(replyR.Fd()), int(callW.Fd()), new(replyPace))
	go func() { // the parent: answer each call with its first argument
		fr := newFrameReader(callR)
		for {
			m, err := fr.read()
			if err != nil {
				return
			}
			frame, _ := encodeReply(m.ID, m.Call, v8sandbox.HostReply{Value: m.Args[1 : len(m.Args)-1]})
			replyW.Write(frame)
		}
	}()
	ask := func(id uint64, arg string) json.RawMessage {
		frame, err := encodeCall(1, id, v8sandbox.HostCall{Name: "f", Args: json.RawMessage(`[` + arg + `]`)})
		if err != nil {
			t.Fatal(err)
		}
		m, err := l.call(frame, id)
		if err != nil {
			t.Fatal(err)
		}
		return m.Value
	}
	first := ask(1, `"first"`)
	ask(2, `"other"`)
	if string(first) != `"first"` {
		t.Errorf("the first reply became %s", first)
	}
}

// TestLaneWaitsByPollingAndAsleep: a worker's lane reads its reply pipe
// without blocking, polling while replies come fast and sleeping in
// epoll_pwait otherwise, mid-frame too (a reply far larger than the pipe's
// buffer arrives in pieces), against a parent end that polls its call pipe
// after each reply.
func TestLaneWaitsByPollingAndAsleep(t *testing.T) {
	replyR, replyW, _, _ := lanePipes(t)
	calls, callW, err := newCallPipe()
	if err != nil {
		t.Fatal(err)
	}
	defer callW.Close()
	pace := new(replyPace)
	l := openLane(int(replyR.Fd()), int(callW.Fd()), pace)
	if runtime.GOOS == "linux" && (l.ep < 0 || calls.ep < 0) {
		t.Fatal("the lane's pipes are not watched for polling")
	}
	release := make(chan struct{}) // the parent answers a call once released
	go func() {
		defer calls.close()
		fr := newFrameReader(calls)
		for {
			m, err := fr.read()
			if err != nil {
				return
			}
			<-release
			value := m.Args[1 : len(m.Args)-1]
			if string(value) == `"big"` {
				value = json.RawMessage(`"` + strings.Repeat("x", 1<<20) + `"`)
			}
			frame, _ := encodeReply(m.ID, m.Call, v8sandbox.HostReply{Value: value})
			replyW.Write(frame)
			calls.answered = time.Now()
		}
	}()
	for i, c := range []struct {
		arg  string
		slow bool // no polling: straight to epoll_pwait
	}{{`"a"`, false}, {`"b"`, true}, {`"big"`, false}, {`"big"`, true}, {`"c"`, false}} {
		pace.slow.Store(c.slow)
		id := uint64(i + 1)
		frame, err := encodeCall(1, id, v8sandbox.HostCall{Name: "f", Args: json.RawMessage(`[` + c.arg + `]`)})
		if err != nil {
			t.Fatal(err)
		}
		type answer struct {
			m   *message
			err error
		}
		done := make(chan answer, 1)
		go func() {
			m, err := l.call(frame, id)
			done <- answer{m, err}
		}()
		release <- struct{}{}
		a := <-done
		if a.err != nil {
			t.Fatalf("call %d: %v", id, a.err)
		}
		want := c.arg
		if c.arg == `"big"` {
			want = `"` + strings.Repeat("x", 1<<20) + `"`
		}
		if string(a.m.Value) != want {
			t.Fatalf("call %d: got %d bytes, want %d", id, len(a.m.Value), len(want))
		}
	}
	replyW.Close() // the parent is gone: the lane says so
	frame, _ := encodeCall(1, 99, v8sandbox.HostCall{Name: "f", Args: json.RawMessage(`[1]`)})
	go func() { <-release }()
	if _, err := l.call(frame, 99); !errors.Is(err, errLaneClosed) {
		t.Errorf("after the parent closed the lane: %v, want errLaneClosed", err)
	}
}

// TestFreeLanesLastFreedFirst: the lane freed last is taken first, so that
// sequential calls stay on one lane.
func TestFreeLanesLastFreedFirst(t *testing.T) {
	a, b := &lane{in: 1}, &lane{in: 2}
	f := &freeLanes{free: []*lane{a, b}}
	if got := f.take(); got != b {
		t.Fatalf("took lane %d first, want the last one (2)", got.in)
	}
	f.put(b)
	if got := f.take(); got != b {
		t.Fatalf("took lane %d after freeing 2, want 2", got.in)
	}
	if got := f.take(); got != a {
		t.Fatalf("took lane %d, want 1", got.in)
	}
	if got := f.take(); got != nil {
		t.Fatalf("took lane %d from an empty list", got.in)
	}
}

// lanePipes returns a lane's two pipes: replies (read end, write end) and
// calls (read end, write end), closed when the test ends.
func lanePipes(t *testing.T) (replyR, replyW, callR, callW *os.File) {
	t.Helper()
	replyR, replyW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	callR, callW, err = os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for _, f := range []*os.File{replyR, replyW, callR, callW} {
			f.Close()
		}
	})
	return replyR, replyW, callR, callW
}
