package v8sandbox

import "runtime"

// SnapshotOff exposes snapshotOff to the external tests: set it only while
// no isolate is being made.
var SnapshotOff = &snapshotOff

// PrepareContexts makes a fresh isolate on one of p's workers and prepares
// (then closes) n contexts for prelude on it: what a run pays for its
// context, without the run.
func PrepareContexts(p *Pool, prelude string, n int, each func()) error {
	w := p.idle.take()
	defer func() { p.idle.put(w) }()
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	w.budget.bind()
	w.disposeIsolate()
	w.newIsolate(64)
	defer w.disposeIsolate()
	for range n {
		c, err := w.prepare(nil, prelude)
		if err != nil {
			return err
		}
		c.ctx.Close()
		each()
	}
	return nil
}
