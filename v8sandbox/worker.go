package v8sandbox

import (
	"log/slog"
	"runtime"

	v8 "rogchap.com/v8go"
)

// worker owns one isolate on one locked OS thread and runs jobs one at a
// time. Everything that touches V8 happens on this goroutine.
type worker struct {
	pool   *Pool
	id     int
	logger *slog.Logger
	budget bufferBudget

	iso      *v8.Isolate
	heap     heapGuard
	heapMB   int
	runs     int
	syncFn   *v8.FunctionTemplate
	asyncFn  *v8.FunctionTemplate
	current  *run // the run in progress, read by host function callbacks
	isolates int  // isolates created so far, for logs
}

func newWorker(p *Pool, id int) *worker {
	return &worker{pool: p, id: id, logger: p.logger.With("worker", id)}
}

// loop serves requests until the pool closes. The goroutine stays locked
// to its thread for its whole life, so the thread exits with it.
func (w *worker) loop() {
	runtime.LockOSThread()
	w.budget = newBufferBudget()
	defer w.disposeIsolate()
	for {
		select {
		case req := <-w.pool.requests:
			req.reply <- w.serve(req)
		case <-w.pool.quit:
			return
		}
	}
}

func (w *worker) serve(req *request) (resp response) {
	limits := req.job.Limits
	if w.iso == nil || w.heapMB != limits.HeapMB || w.runs >= w.pool.opts.RecycleAfter {
		w.disposeIsolate()
		w.newIsolate(limits.HeapMB)
	}
	w.runs++
	w.budget.setLimitMB(limits.ArrayBufferMB)

	r := newRun(w, req)
	result, err := r.execute()
	if r.terminated() {
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
	w.iso = v8.NewIsolate()
	w.heap = installHeapGuard(w.iso, heapMB)
	w.heapMB = heapMB
	w.runs = 0
	w.isolates++
	disallowAtomicsWait(w.iso)
	w.syncFn = v8.NewFunctionTemplate(w.iso, w.callSync)
	w.asyncFn = v8.NewFunctionTemplate(w.iso, w.callAsync)
	w.logger.Debug("isolate created", "heap_mb", heapMB, "isolates", w.isolates)
}

func (w *worker) disposeIsolate() {
	if w.iso == nil {
		return
	}
	w.iso.Dispose()
	w.heap.free()
	w.iso, w.syncFn, w.asyncFn = nil, nil, nil
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
