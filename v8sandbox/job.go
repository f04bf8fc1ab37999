package v8sandbox

import (
	"context"
	"encoding/json"
	"time"
)

// Job is one script run. It is plain data: everything a run needs besides
// the [Host] that serves its host functions.
type Job struct {
	// Source is the JavaScript to run as a classic script.
	Source string `json:"source"`
	// Origin names the script in stack traces; default "main.js".
	Origin string `json:"origin,omitempty"`
	// Prelude is trusted JavaScript run in the same context before Source,
	// for example to wrap raw host functions into a friendlier API.
	Prelude string `json:"prelude,omitempty"`
	// Functions are the host functions installed as globals before the
	// prelude runs. A dotted name ("api.fetch") creates nested objects.
	Functions []Function `json:"functions,omitempty"`
	// AwaitResult makes the engine await Source's completion value when it
	// is a promise and return it, JSON-serialized, in [Result].Value.
	AwaitResult bool `json:"await_result,omitempty"`
	// Limits bound the run; zero fields take the pool's defaults.
	Limits Limits `json:"limits"`
	// Principal is the key of the principal the run is for (a name, never
	// a credential; "" when the deployment has none). A process-isolated
	// runner never lets runs of different principals share a worker
	// process, at once or one after the other. The in-process [Pool]
	// ignores it: its runs all share the gateway's process. It is never
	// sent to a worker.
	Principal string `json:"-"`
}

// Function declares a host function visible to the script.
//
// The script calls it with any arguments; they reach the [Host] as the JSON
// array of a [HostCall]. A sync function returns the host's JSON result directly (or throws
// its error); an async one returns a Promise settled on the worker's event
// loop, so many calls can be in flight at once.
type Function struct {
	Name  string `json:"name"`
	Async bool   `json:"async,omitempty"`
}

// Limits bound one run. Zero values mean "use the pool default".
type Limits struct {
	// Timeout is the wall-clock limit of the run.
	Timeout time.Duration `json:"timeout,omitempty"`
	// HeapMB caps the isolate's old-generation heap.
	HeapMB int `json:"heap_mb,omitempty"`
	// ArrayBufferMB caps memory held by ArrayBuffers (outside the JS heap).
	ArrayBufferMB int `json:"array_buffer_mb,omitempty"`
	// MaxResultBytes caps the size of the serialized result.
	MaxResultBytes int `json:"max_result_bytes,omitempty"`
}

// Result is the outcome of a successful run.
type Result struct {
	// Value is the JSON of the awaited completion value (AwaitResult only);
	// undefined becomes null.
	Value json.RawMessage `json:"value,omitempty"`
	// HostCalls counts host function calls made by the run.
	HostCalls int `json:"host_calls"`
	// Duration is the wall time of the run on its worker.
	Duration time.Duration `json:"duration"`
}

// Runner runs jobs. [*Pool] runs them on threads of this process; a
// process-isolated runner implements the same interface.
type Runner interface {
	// Run runs job, serving its host functions with host. A non-nil error
	// is always an *Error.
	Run(ctx context.Context, job Job, host Host) (Result, error)
	// Close stops the runner and releases its isolates.
	Close()
}
