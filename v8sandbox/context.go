package v8sandbox

import (
	"encoding/json"
	"slices"

	v8 "rogchap.com/v8go"
)

// preparedContext is a fresh context with bootstrap.js (and a job's prelude)
// already run in it: everything a run needs before the job's own source.
// No job code has touched it.
type preparedContext struct {
	ctx       *v8.Context
	serialize *v8.Function
	describe  *v8.Function
	seal      *v8.Function // removes the serializer hook after the prelude
	// What it was prepared for: a job with equal functions and prelude may
	// use it.
	functions []Function
	prelude   string
}

// fits reports whether c was prepared for exactly job's functions and
// prelude. Comparing the prelude costs nothing when the caller reuses one
// string per catalogue version (equal pointers compare in O(1)).
func (c *preparedContext) fits(job Job) bool {
	return c.prelude == job.Prelude && slices.Equal(c.functions, job.Functions)
}

// prepare creates a context on the worker's isolate, installs the host
// functions with bootstrap.js and runs prelude. On error the context is
// closed.
func (w *worker) prepare(functions []Function, prelude string) (*preparedContext, error) {
	c := &preparedContext{ctx: v8.NewContext(w.iso), functions: functions, prelude: prelude}
	if err := c.bootstrap(w); err != nil {
		c.ctx.Close()
		return nil, err
	}
	if prelude != "" {
		if err := w.runPrelude(c.ctx, prelude); err != nil {
			c.ctx.Close()
			return nil, Errorf(CodeInternal, "prelude failed: %v", err)
		}
	}
	// Only the prelude may register a result serializer.
	if _, err := c.seal.Call(v8.Undefined(w.iso)); err != nil {
		c.ctx.Close()
		return nil, Errorf(CodeInternal, "sealing the bootstrap: %v", err)
	}
	return c, nil
}

// preludeOrigin is the script name a prelude runs under.
const preludeOrigin = "isogate:prelude.js"

// compiledPrelude is the last prelude a worker ran, compiled on its
// isolate: every context of the isolate runs the same compiled script,
// instead of copying its text across cgo, decoding it into a V8 string and
// looking it up in V8's compilation cache each time (issue 44: a tenth of
// a process worker's CPU per run). Only the code is shared: the script's
// top-level scope and everything it creates belong to the context it runs
// in.
type compiledPrelude struct {
	source string
	script *v8.UnboundScript
}

// runPrelude runs prelude in ctx, compiled once per isolate for the last
// prelude run (a job of another catalogue version compiles its own and
// replaces it). A prelude that does not compile is not kept.
func (w *worker) runPrelude(ctx *v8.Context, prelude string) error {
	if w.prelude.script == nil || w.prelude.source != prelude {
		script, err := w.iso.CompileUnboundScript(prelude, preludeOrigin, v8.CompileOptions{})
		if err != nil {
			return err
		}
		w.prelude = compiledPrelude{source: prelude, script: script}
	}
	_, err := w.prelude.script.Run(ctx)
	return err
}

// bootstrap installs the host functions and captures the helpers. A
// context made from the startup snapshot has bootstrap.js run already.
func (c *preparedContext) bootstrap(w *worker) error {
	if !w.fromSnapshot {
		if _, err := c.ctx.RunScript(startupSource(), "isogate:bootstrap.js"); err != nil {
			return Errorf(CodeInternal, "bootstrap: %v", err)
		}
	}
	fnValue, err := c.ctx.Global().Get("__isogate_bootstrap")
	if err != nil {
		return Errorf(CodeInternal, "bootstrap: %v", err)
	}
	fn, err := fnValue.AsFunction()
	if err != nil {
		return Errorf(CodeInternal, "bootstrap: %v", err)
	}
	functions := c.functions
	if functions == nil {
		functions = []Function{}
	}
	specJSON, err := json.Marshal(functions)
	if err != nil {
		return Errorf(CodeInternal, "bootstrap: %v", err)
	}
	specs, err := v8.JSONParse(c.ctx, string(specJSON))
	if err != nil {
		return Errorf(CodeInternal, "bootstrap: %v", err)
	}
	helpers, err := fn.Call(v8.Undefined(w.iso), w.syncFn.GetFunction(c.ctx), w.asyncFn.GetFunction(c.ctx), specs)
	if err != nil {
		return Errorf(CodeInternal, "bootstrap: %v", err)
	}
	obj := helpers.Object()
	if c.serialize, err = helperAt(obj, 0); err != nil {
		return err
	}
	if c.describe, err = helperAt(obj, 1); err != nil {
		return err
	}
	c.seal, err = helperAt(obj, 2)
	return err
}

// takeWarm hands out the pre-warmed context if it fits job, else discards
// it (a job with other functions or another prelude gets a fresh one).
func (w *worker) takeWarm(job Job) *preparedContext {
	c := w.warm
	w.warm = nil
	if c == nil {
		return nil
	}
	if !c.fits(job) {
		c.ctx.Close()
		return nil
	}
	return c
}

// prewarm prepares the context for the next run, for the same functions and
// prelude as the last one, so that a run of the same shape starts on a
// ready context. It runs between runs, only when no request waits, and
// replaces an isolate that is due for recycling at the same time.
func (w *worker) prewarm() {
	if w.warm != nil || w.last == nil {
		return
	}
	if w.iso == nil || w.runs >= w.pool.opts.RecycleAfter {
		w.disposeIsolate()
		w.newIsolate(w.last.Limits.HeapMB)
	}
	c, err := w.prepare(w.last.Functions, w.last.Prelude)
	if err != nil || w.heap.hit() {
		if c != nil {
			c.ctx.Close()
		}
		w.logger.Debug("pre-warming a context failed", "err", err)
		w.disposeIsolate()
		return
	}
	w.warm = c
}
