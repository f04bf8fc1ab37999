package v8sandbox

import (
	"context"
	"fmt"
	"testing"
)

// Runs that come one at a time keep using one warm isolate: a pool of four
// workers creates one isolate, not one per worker in turn (issue 44: a
// sandbox worker process serving a principal's occasional runs paid an
// isolate's creation on each of its first four runs).
func TestIdleWorkersReuseTheWarmIsolate(t *testing.T) {
	const workers = 4
	p := NewPool(Options{Workers: workers})
	defer p.Close()
	// settle waits until every worker is tidied and idle (each run's
	// worker is tidied after it answered), leaving them as they are.
	settle := func() (isolates int) {
		for range workers {
			<-p.idle.ready
		}
		p.idle.mu.Lock()
		for _, w := range p.idle.stack {
			isolates += w.isolates
		}
		p.idle.mu.Unlock()
		for range workers {
			p.idle.ready <- struct{}{}
		}
		return isolates
	}
	for i := range 3 * workers {
		if res, err := p.Run(context.Background(), Job{Source: "1 + 1", AwaitResult: true}, nil); err != nil || string(res.Value) != "2" {
			t.Fatalf("run %d: %s %v", i, res.Value, err)
		}
		if n := settle(); n != 1 {
			t.Fatalf("after run %d, %d isolates were created, want 1 (runs one at a time reuse the warm one)", i, n)
		}
	}
}

// Warm leaves one worker with its isolate and a prepared context, at the
// top of the idle workers, where the first run takes it.
func TestWarmPreparesTheFirstRun(t *testing.T) {
	p := NewPool(Options{Workers: 2})
	defer p.Close()
	p.Warm()
	for range 2 {
		<-p.idle.ready
	}
	isolates, warm := 0, 0
	p.idle.mu.Lock()
	for _, w := range p.idle.stack {
		isolates += w.isolates
		if w.warm != nil {
			warm++
		}
	}
	p.idle.mu.Unlock()
	for range 2 {
		p.idle.ready <- struct{}{}
	}
	if isolates != 1 || warm != 1 {
		t.Fatalf("after Warm: %d isolates, %d prepared contexts; want 1 and 1", isolates, warm)
	}
	if res, err := p.Run(context.Background(), Job{Source: "1 + 1", AwaitResult: true}, nil); err != nil || string(res.Value) != "2" {
		t.Fatalf("first run after Warm: %s %v", res.Value, err)
	}
}

// A run that comes while the warm worker is finishing the previous one
// (its outcome being delivered, its next context not yet prepared) waits
// for it instead of creating an isolate on a cold worker: a principal's
// back-to-back runs in a sandbox worker process share one isolate (issue
// 44: the second run of each parked worker's principal built a second
// isolate, 5–10 ms). Runs that come together still spread: one claim per
// finishing worker.
func TestABackToBackRunWaitsForTheWarmIsolate(t *testing.T) {
	const workers = 4
	p := NewPool(Options{Workers: workers})
	defer p.Close()
	claimed := make(chan struct{}, 1)
	p.idle.onClaim = func() { claimed <- struct{}{} }
	run := func() error {
		res, err := p.Run(context.Background(), Job{Source: "1 + 1", AwaitResult: true}, nil)
		if err == nil && string(res.Value) != "2" {
			err = fmt.Errorf("value %s", res.Value)
		}
		return err
	}
	if err := run(); err != nil { // the warm isolate
		t.Fatal(err)
	}
	second := make(chan error, 1)
	p.RunThen(context.Background(), Job{Source: "1 + 1", AwaitResult: true}, nil, func(_ Result, err error) {
		if err != nil {
			t.Error(err)
		}
		// The next run comes while this one's worker is still finishing;
		// this returns once it has claimed the worker, or once it ran
		// elsewhere.
		go func() { second <- run() }()
		select {
		case <-claimed:
		case err := <-second:
			second <- err
		}
	})
	if err := <-second; err != nil {
		t.Fatal(err)
	}
	n := 0
	for range workers {
		<-p.idle.ready
	}
	p.idle.mu.Lock()
	for _, w := range p.idle.stack {
		n += w.isolates
	}
	p.idle.mu.Unlock()
	for range workers {
		p.idle.ready <- struct{}{}
	}
	if n != 1 {
		t.Fatalf("%d isolates were created, want 1: the back-to-back run built its own", n)
	}
}
