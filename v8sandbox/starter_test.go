package v8sandbox

import (
	"context"
	"encoding/json"
	"sync/atomic"
	"testing"
)

// starterHost echoes its arguments; calls started through Start count in
// started, those made through Call in called, and waits in waited.
type starterHost struct{ started, called, waited atomic.Int32 }

func (h *starterHost) reply(c HostCall) HostReply {
	switch c.Name {
	case "boom":
		return HostReply{Error: &HostError{Code: "E_BOOM", Message: "boom"}}
	case "bad":
		return HostReply{Value: json.RawMessage(`{not json`)}
	}
	return HostReply{Value: c.Args}
}

func (h *starterHost) Call(_ context.Context, c HostCall) HostReply {
	h.called.Add(1)
	return h.reply(c)
}

func (h *starterHost) Start(_ context.Context, c HostCall) func() HostReply {
	h.started.Add(1)
	return func() HostReply { h.waited.Add(1); return h.reply(c) }
}

// A Starter's calls are started on the V8 thread and waited for there when
// alone in flight; concurrent ones fall back to Call or a goroutine's wait,
// errors and checks behave as through Dispatch, and a call never awaited
// is still waited for.
func TestStarterHost(t *testing.T) {
	pool := NewPool(Options{Workers: 1})
	defer pool.Close()
	fns := []Function{{Name: "echo", Async: true}, {Name: "boom", Async: true}, {Name: "bad", Async: true}}
	run := func(src string) (*starterHost, Result, error) {
		h := new(starterHost)
		res, err := pool.Run(context.Background(), Job{Source: src, AwaitResult: true, Functions: fns}, h)
		return h, res, err
	}

	h, res, err := run(`(async () => { let s = 0; for (let i = 0; i < 10; i++) s += (await echo(i))[0]; return s })()`)
	if err != nil || string(res.Value) != "45" || h.started.Load() != 10 || h.waited.Load() != 10 || h.called.Load() != 0 {
		t.Fatalf("sequential: %s %v, started %d waited %d called %d", res.Value, err, h.started.Load(), h.waited.Load(), h.called.Load())
	}
	h, res, err = run(`Promise.all([echo(1), echo(2), echo(3)]).then(v => v.map(x => x[0]))`)
	if err != nil || string(res.Value) != "[1,2,3]" || h.started.Load() != 1 || h.waited.Load() != 1 || h.called.Load() != 2 {
		t.Fatalf("concurrent: %s %v, started %d waited %d called %d", res.Value, err, h.started.Load(), h.waited.Load(), h.called.Load())
	}
	_, res, err = run(`boom().catch(e => e.code + ":" + e.message)`)
	if err != nil || string(res.Value) != `"E_BOOM:boom"` {
		t.Fatalf("thrown: %s %v", res.Value, err)
	}
	if _, _, err = run(`bad()`); CodeOf(err) != CodeInternal {
		t.Fatalf("invalid JSON: %v, want INTERNAL", err)
	}
	h, _, err = run(`echo(1); throw new Error("early")`)
	if CodeOf(err) != CodeEval {
		t.Fatalf("unawaited: %v, want EVAL_ERROR", err)
	}
	// Waited for after the run, on a goroutine: runs let it be scheduled.
	for i := 0; h.waited.Load() != 1; i++ {
		if i == 1000 {
			t.Fatal("a call started and never awaited was not waited for")
		}
		if _, err := pool.Run(context.Background(), Job{Source: "0"}, nil); err != nil {
			t.Fatal(err)
		}
	}
}
