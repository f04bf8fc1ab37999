package v8sandbox

import (
	"log/slog"
	"runtime"

	v8 "rogchap.com/v8go"
)

// worker owns one isolate and runs jobs one at a time, on the goroutine of
// whoever holds it (taken from the pool's idle list), locked to its thread
// while it touches V8.
type worker struct {
	pool   *Pool
	id     int
	logger *slog.Logger
	budget bufferBudget

	iso *v8.Isolate
	// fromSnapshot: iso starts its contexts from the startup snapshot, with
	// bootstrap.js already run in them.
	fromSnapshot bool
	heap         heapGuard
	heapMB       int
	runs         int
	syncFn       *v8.FunctionTemplate
	asyncFn      *v8.FunctionTemplate
	current      *run            // the run in progress, read by host function callbacks
	scripts      scriptCache     // compiled on iso, emptied with it
	prelude      compiledPrelude // compiled on iso, emptied with it
	isolates     int             // isolates created so far, for logs
	finishing    bool            // warm, its run over, not yet put back (idle.go; guarded by idle.mu)

	// warm is a context prepared between runs for a job shaped like last
	// (same functions and prelude); nil when none is ready.
	warm *preparedContext
	last *Job
	// used is the last run's context, closed after its reply went out.
	used *v8.Context
}

func newWorker(p *Pool, id int) *worker {
	return &worker{pool: p, id: id, logger: p.logger.With("worker", id), budget: newBufferBudget()}
}

// serve runs one request on the calling goroutine, locked to its OS thread
// for the run (the ArrayBuffer budget is charged per thread).
func (w *worker) serve(req *request) (resp response) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	w.budget.bind()
	return w.execute(req)
}

// tidy runs after a run's reply: it closes the run's context, prepares the
// next one (for a job of the same shape) and offers the worker to the next
// caller. When the pool is closing it skips the preparation.
func (w *worker) tidy() {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	w.budget.bind()
	w.closeUsed()
	w.collectIfBloated()
	select {
	case <-w.pool.quit:
	default:
		w.prewarm()
	}
	w.pool.idle.put(w)
}

// Dead contexts are only reclaimed by full collections, which V8 puts off
// until the heap nears its cap: eight busy isolates would hold eight heaps
// of garbage. Every collectCheckEvery runs, an isolate whose heap holds more
// than collectAboveBytes is told to collect (a few ms, between runs).
const (
	collectCheckEvery = 8
	collectAboveBytes = 8 << 20
)

// collectIfBloated keeps an isolate's heap close to its live data.
func (w *worker) collectIfBloated() {
	if w.iso == nil || w.runs%collectCheckEvery != 0 {
		return
	}
	if w.iso.GetHeapStatistics().UsedHeapSize > collectAboveBytes {
		lowMemory(w.iso)
	}
}

func (w *worker) execute(req *request) (resp response) {
	limits := req.job.Limits
	last := req.job
	last.Source = "" // only the shape is kept
	w.last = &last
	if w.iso == nil || w.heapMB != limits.HeapMB || w.runs >= w.pool.opts.RecycleAfter {
		w.disposeIsolate()
		w.newIsolate(limits.HeapMB)
	}
	w.runs++
	w.budget.setLimitMB(limits.ArrayBufferMB)

	r := newRun(w, req)
	result, err := r.execute()
	if r.terminated() {
		w.closeUsed()
		// A terminated isolate may carry a raised heap limit or a pending
		// termination: replace it rather than reason about its state.
		w.disposeIsolate()
	}
	if err != nil {
		return response{err: err}
	}
	return response{result: result}
}

func (w *worker) newIsolate(heapMB int) {
	if s := sharedSnapshot(w.logger); s != nil {
		w.iso, w.fromSnapshot = s.newIsolate(), true
	} else {
		w.iso, w.fromSnapshot = v8.NewIsolate(), false
	}
	w.heap = installHeapGuard(w.iso, heapMB)
	w.heapMB = heapMB
	w.runs = 0
	w.isolates++
	disallowAtomicsWait(w.iso)
	w.syncFn = v8.NewFunctionTemplate(w.iso, w.callSync)
	w.asyncFn = v8.NewFunctionTemplate(w.iso, w.callAsync)
	w.logger.Debug("isolate created", "heap_mb", heapMB, "isolates", w.isolates)
}

// closeUsed closes the last run's context.
func (w *worker) closeUsed() {
	if w.used != nil {
		w.used.Close()
		w.used = nil
	}
}

func (w *worker) disposeIsolate() {
	if w.iso == nil {
		return
	}
	w.closeUsed()
	if w.warm != nil {
		w.warm.ctx.Close()
		w.warm = nil
	}
	w.iso.Dispose()
	w.heap.free()
	w.iso, w.syncFn, w.asyncFn = nil, nil, nil
	w.scripts = scriptCache{}
	w.prelude = compiledPrelude{}
}

func (w *worker) callSync(info *v8.FunctionCallbackInfo) *v8.Value {
	if w.current == nil {
		return nil
	}
	return w.current.callSync(info)
}

func (w *worker) callAsync(info *v8.FunctionCallbackInfo) *v8.Value {
	if w.current == nil {
		return nil
	}
	return w.current.callAsync(info)
}
