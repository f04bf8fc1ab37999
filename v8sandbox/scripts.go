package v8sandbox

import v8 "rogchap.com/v8go"

// A worker keeps the scripts it compiled lately, so that a source it runs
// again (a retried or scheduled program, a replay, a benchmark) is not
// compiled again: V8's own compilation cache finds its code, but v8go
// copies the source across cgo, wraps it and keeps a new handle every time
// until the isolate is disposed. A compiled script is bound to a fresh
// context for each run; nothing of one run is kept in it.
const (
	// cachedScripts bounds the scripts kept per isolate.
	cachedScripts = 16
	// cachedScriptBytes bounds the bytes of source they hold.
	cachedScriptBytes = 1 << 20
)

// scriptKey names a compiled script: its origin and source.
type scriptKey struct{ origin, source string }

// scriptCache is one isolate's compiled scripts. It is emptied with the
// isolate, and when full (it then starts over with the next script).
type scriptCache struct {
	scripts map[scriptKey]*v8.UnboundScript
	bytes   int
}

// compile returns source compiled on the worker's isolate, from the cache
// when it holds it. A script that does not compile is never cached.
func (w *worker) compile(source, origin string) (*v8.UnboundScript, error) {
	key := scriptKey{origin, source}
	if s, ok := w.scripts.scripts[key]; ok {
		return s, nil
	}
	s, err := w.iso.CompileUnboundScript(source, origin, v8.CompileOptions{})
	if err != nil {
		return nil, err
	}
	if len(source) > cachedScriptBytes {
		return s, nil
	}
	c := &w.scripts
	if len(c.scripts) == cachedScripts || c.bytes+len(source) > cachedScriptBytes {
		*c = scriptCache{} // full: start over with the scripts run lately
	}
	if c.scripts == nil {
		c.scripts = map[scriptKey]*v8.UnboundScript{}
	}
	c.scripts[key] = s
	c.bytes += len(source)
	return s, nil
}
