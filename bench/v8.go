package bench

import (
	"context"
	"encoding/json"
	"sync"

	"github.com/isogate/isogate/v8sandbox"
)

// RunnerVariant runs workloads on any [v8sandbox.Runner]: the thread pool,
// a fresh-isolate pool or a process-isolated pool.
type RunnerVariant struct {
	name      string
	runner    v8sandbox.Runner
	syncTools bool

	mu   sync.Mutex
	jobs map[*Workload]v8sandbox.Job
}

// NewRunnerVariant builds a variant called name on the runner returned by
// factory. This is how a process-isolated runner (package
// v8sandbox/procpool) plugs in: every [v8sandbox.Runner] runs the same jobs.
func NewRunnerVariant(name string, factory func() (v8sandbox.Runner, error)) (*RunnerVariant, error) {
	r, err := factory()
	if err != nil {
		return nil, err
	}
	return &RunnerVariant{name: name, runner: r, jobs: map[*Workload]v8sandbox.Job{}}, nil
}

// NewV8Pool is variant 1: a warm isolate pool of workers threads, a fresh
// context per run.
func NewV8Pool(workers int) *RunnerVariant {
	v, _ := NewRunnerVariant("v8-pool", func() (v8sandbox.Runner, error) {
		return v8sandbox.NewPool(v8sandbox.Options{Workers: workers, Logger: quietLogger}), nil
	})
	return v
}

// NewV8Fresh is variant 3: a new isolate for every run.
func NewV8Fresh(workers int) *RunnerVariant {
	v, _ := NewRunnerVariant("v8-fresh", func() (v8sandbox.Runner, error) {
		return v8sandbox.NewPool(v8sandbox.Options{Workers: workers, RecycleAfter: 1, Logger: quietLogger}), nil
	})
	return v
}

// Name implements [Variant].
func (v *RunnerVariant) Name() string { return v.name }

// SyncTools makes the variant declare every tool as a sync host function
// (called on the isolate's thread, blocking the script) instead of an
// async one, and renames it. Call it before the first run.
func (v *RunnerVariant) SyncTools(name string) *RunnerVariant {
	v.syncTools = true
	v.name = name
	return v
}

// Runner returns the underlying runner.
func (v *RunnerVariant) Runner() v8sandbox.Runner { return v.runner }

// Close implements [Variant].
func (v *RunnerVariant) Close() { v.runner.Close() }

// Run implements [Variant]. Every tool is an async host function (unless
// [RunnerVariant.SyncTools]): calls return promises and run concurrently,
// as in isogate's code mode.
func (v *RunnerVariant) Run(ctx context.Context, w *Workload) (json.RawMessage, error) {
	job, err := v.job(w)
	if err != nil {
		return nil, err
	}
	ctx, cancel := withDefaultTimeout(ctx)
	defer cancel()
	host := v8sandbox.HostFunc(func(ctx context.Context, name string, args json.RawMessage) (json.RawMessage, error) {
		return w.callTool(ctx, name, args)
	})
	res, err := v.runner.Run(ctx, job, host)
	if err != nil {
		return nil, err
	}
	return res.Value, nil
}

func (v *RunnerVariant) job(w *Workload) (v8sandbox.Job, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if job, ok := v.jobs[w]; ok {
		return job, nil
	}
	js, err := script(w, V8Target)
	if err != nil {
		return v8sandbox.Job{}, err
	}
	job := v8sandbox.Job{Source: js, Origin: "program.js", AwaitResult: true}
	for _, name := range w.toolNames() {
		job.Functions = append(job.Functions, v8sandbox.Function{Name: name, Async: !v.syncTools})
	}
	v.jobs[w] = job
	return job, nil
}
