package v8sandbox

import (
	"bytes"
	"context"
	"runtime"
	"strconv"
	"sync"
	"testing"
	"time"
)

// goroutineHost records the goroutine making each call, by function name,
// and closes made when a call to "fire" arrives.
type goroutineHost struct {
	mu      sync.Mutex
	threads map[string][]int
	made    chan struct{}
}

// goroutineID reads the calling goroutine's id from its stack trace.
func goroutineID() int {
	buf := make([]byte, 64)
	buf = buf[:runtime.Stack(buf, false)]
	buf = bytes.TrimPrefix(buf, []byte("goroutine "))
	id, _ := strconv.Atoi(string(buf[:bytes.IndexByte(buf, ' ')]))
	return id
}

func (h *goroutineHost) Call(_ context.Context, c HostCall) HostReply {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.threads[c.Name] = append(h.threads[c.Name], goroutineID())
	if c.Name == "fire" {
		close(h.made)
	}
	return HostReply{Value: c.Args}
}

// An awaited async call to an ordinary Host, alone in flight, is made by the
// goroutine running the script (no hand-off to another goroutine and back);
// calls in flight together still run concurrently on goroutines of their
// own; a call the script never awaits is still made.
func TestHeldAsyncCallsRunOnTheScriptThread(t *testing.T) {
	pool := NewPool(Options{Workers: 1})
	defer pool.Close()
	fns := []Function{{Name: "here"}, {Name: "echo", Async: true}, {Name: "fire", Async: true}}
	run := func(src string) (*goroutineHost, Result, error) {
		h := &goroutineHost{threads: map[string][]int{}, made: make(chan struct{})}
		res, err := pool.Run(context.Background(), Job{Source: src, AwaitResult: true, Functions: fns}, h)
		return h, res, err
	}

	// here() is sync: it runs on the goroutine running the script.
	h, res, err := run(`(async () => { here(); let s = 0; for (let i = 0; i < 5; i++) s += (await echo(i))[0]; return s })()`)
	if err != nil || string(res.Value) != "10" {
		t.Fatalf("sequential: %s %v", res.Value, err)
	}
	for i, tid := range h.threads["echo"] {
		if tid != h.threads["here"][0] {
			t.Fatalf("awaited call %d ran on goroutine %d, the script on %d", i, tid, h.threads["here"][0])
		}
	}

	// Promise.all: the second call starts the first on a goroutine too.
	h, res, err = run(`here(); Promise.all([echo(1), echo(2), echo(3)]).then(v => v.map(x => x[0]))`)
	if err != nil || string(res.Value) != "[1,2,3]" || len(h.threads["echo"]) != 3 {
		t.Fatalf("concurrent: %s %v %v", res.Value, err, h.threads)
	}
	for _, tid := range h.threads["echo"] {
		if tid == h.threads["here"][0] {
			t.Fatalf("a call in flight with others ran on the script's goroutine: %v", h.threads)
		}
	}

	// Never awaited: made anyway, once the run is over.
	h, res, err = run(`(async () => { fire("x"); return 7 })()`)
	if err != nil || string(res.Value) != "7" {
		t.Fatalf("unawaited: %s %v", res.Value, err)
	}
	select {
	case <-h.made:
	case <-time.After(10 * time.Second):
		t.Fatal("a call the script never awaited was never made")
	}
}
