// Package v8sandbox runs untrusted JavaScript in V8 isolates under hard
// limits.
//
// A [Pool] owns a fixed number of workers, each owning one warm isolate;
// every [Job] gets a fresh context on that isolate, so no state survives
// from one run to the next. A run's goroutine is locked to an OS thread
// whenever JavaScript may execute. While the script only waits for async
// host calls it is unlocked: resuming on whichever thread is free costs far
// less than waking one particular thread (sequential host calls ran twice
// as fast), and every v8go call takes V8's Locker, which moves the isolate
// safely; the per-thread ArrayBuffer budget is bound again on resuming.
// Isolates are recycled after a configurable number of runs and after any
// run that was terminated.
//
// A job is plain data: JavaScript source, the names of the host functions it
// may call and its [Limits]. A host call is plain data too: a [HostCall]
// (name, JSON arguments) answered by a [HostReply] (a JSON value, a
// [HostError] thrown into the script with its name, code and data, or a
// fatal [Error] that ends the run). A [Table] maps each function to its
// handler, so a job's declarations and its dispatch come from one place;
// [Dispatch] turns a [Host]'s answer into the reply for every runner. A host
// that also implements [Starter] has an async call that is alone in flight
// started and waited for on the V8 thread itself (procpool's worker does, on
// its call lanes). The
// engine never hands V8 values to Go code outside this package. That keeps a
// job runnable in another process unchanged (package procpool), and package
// sandboxtest holds the behaviour suite every runner passes.
//
// Limits:
//   - a wall-clock deadline enforced with TerminateExecution, re-issued until
//     the run returns (an interrupt sent while no JavaScript runs is lost);
//   - an old-generation heap cap per isolate (a near-heap-limit callback that
//     terminates the script instead of letting V8 abort the process);
//   - an ArrayBuffer memory cap (a counting allocator: allocation beyond the
//     cap is a catchable RangeError);
//   - a cap on the size of the serialized result.
//
// Only ECMAScript built-ins and the job's host functions are visible to a
// script: no console, timers, require, process, fetch or WebAssembly.
package v8sandbox
