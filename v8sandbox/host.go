package v8sandbox

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/isogate/isogate/internal/jsonscan"
)

// HostCall is one call a script makes to a host function: plain data, the
// same in the in-process pool and across the process boundary.
type HostCall struct {
	// Name is the function's name as declared in [Job].Functions.
	Name string `json:"name"`
	// Args are the call's arguments, a JSON array.
	Args json.RawMessage `json:"args"`
}

// HostReply is the answer to a [HostCall]: at most one of Error and Fatal
// is set; otherwise Value is the result (empty means undefined).
type HostReply struct {
	Value json.RawMessage `json:"value,omitempty"`
	// Error is thrown into the script (a sync function throws, an async
	// one rejects); the script may catch it.
	Error *HostError `json:"error,omitempty"`
	// Fatal ends the whole run with this error (for example OUTPUT_LIMIT).
	Fatal *Error `json:"fatal,omitempty"`
	// Checked says Value is known to be valid JSON (the host built or
	// validated it), so [Dispatch] does not scan it again: a large value
	// is then read once, by V8's JSON.parse.
	Checked bool `json:"-"`
}

// HostError is an error a host function throws into the script. The script
// catches an Error whose name, message, code and data are these (code and
// data only when set), whichever runner carried the call.
type HostError struct {
	// Name is the Error's name; empty means "Error".
	Name string `json:"name,omitempty"`
	// Code is a machine-readable code, e.g. "TOOL_DENIED" (e.code).
	Code Code `json:"code,omitempty"`
	// Message is the Error's message.
	Message string `json:"message"`
	// Data is any JSON the script may inspect (e.data).
	Data json.RawMessage `json:"data,omitempty"`
}

// Error implements error: "CODE: message" when there is a code.
func (e *HostError) Error() string {
	if e.Code != "" {
		return string(e.Code) + ": " + e.Message
	}
	return e.Message
}

// ErrorCode implements [Coded]: the code the script sees, "" when none.
func (e *HostError) ErrorCode() Code { return e.Code }

// Host serves the host functions of a job. Sync functions are called on
// the thread running the script and should be quick; async ones run on a
// goroutine of their own, or on the one running the script when the script
// waits for that call alone, and must honour ctx, which ends with the run
// (a call that outlives ctx holds its run past the deadline).
// [Table] builds a Host from one handler per function; [HostFunc] adapts a
// single function.
type Host interface {
	Call(ctx context.Context, call HostCall) HostReply
}

// Starter is an optional interface of a [Host] whose async calls can be
// started without blocking and then waited for by the thread running the
// script (a worker process writes the call on a lane and reads the reply
// itself): no goroutine carries the call and no hand-off brings its reply
// back. Start returns nil when it cannot start call so; the call is then
// made through Call on a goroutine. The returned wait is called exactly
// once and its reply goes through the same checks as [Dispatch]'s; it must
// return once ctx ends, like Call.
type Starter interface {
	Start(ctx context.Context, call HostCall) (wait func() HostReply)
}

// HostFunc adapts a function returning a JSON result or an error to the
// [Host] interface; see [Reply] for how the outcome becomes a reply.
type HostFunc func(ctx context.Context, name string, args json.RawMessage) (json.RawMessage, error)

// Call implements [Host].
func (f HostFunc) Call(ctx context.Context, call HostCall) HostReply {
	return Reply(f(ctx, call.Name, call.Args))
}

// Reply turns a Go outcome into a reply: nil error → Value (nil means
// undefined); a *Error ends the run (Fatal); a *HostError is thrown as it
// is; any other error is thrown as an Error with its message.
func Reply(value json.RawMessage, err error) HostReply {
	if err == nil {
		return HostReply{Value: value}
	}
	var fatal *Error
	if errors.As(err, &fatal) {
		return HostReply{Fatal: fatal}
	}
	var he *HostError
	if errors.As(err, &he) {
		return HostReply{Error: he}
	}
	return HostReply{Error: &HostError{Message: err.Error()}}
}

// Dispatch serves one call with host: the one place where a host's answer
// becomes a reply, used by every runner (the process-isolated one calls it
// in the parent). A missing host is a thrown error; a panic, or a value or
// an error's data that is not JSON, ends the run with INTERNAL (in either
// runner: the reply could not cross the process boundary either).
func Dispatch(ctx context.Context, host Host, call HostCall) (reply HostReply) {
	if host == nil {
		return HostReply{Error: &HostError{Message: fmt.Sprintf("no host serves function %q", call.Name)}}
	}
	defer func() {
		if p := recover(); p != nil {
			reply = HostReply{Fatal: Errorf(CodeInternal, "host function %q panicked: %v", call.Name, p)}
		}
	}()
	return checkReply(call.Name, host.Call(ctx, call))
}

// DispatchWait is [Dispatch] for a call started with [Starter]: it waits
// for the reply and checks it alike.
func DispatchWait(name string, wait func() HostReply) (reply HostReply) {
	defer func() {
		if p := recover(); p != nil {
			reply = HostReply{Fatal: Errorf(CodeInternal, "host function %q panicked: %v", name, p)}
		}
	}()
	return checkReply(name, wait())
}

// checkReply makes a host's answer a reply: see [Dispatch].
func checkReply(name string, reply HostReply) HostReply {
	switch {
	case reply.Fatal != nil:
		return HostReply{Fatal: reply.Fatal}
	case reply.Error != nil:
		if len(reply.Error.Data) > 0 && !json.Valid(reply.Error.Data) {
			return HostReply{Fatal: Errorf(CodeInternal, "host function %q threw an error whose data is not JSON", name)}
		}
		return HostReply{Error: reply.Error}
	case len(reply.Value) > 0 && !reply.Checked && !jsonscan.Valid(reply.Value):
		return HostReply{Fatal: Errorf(CodeInternal, "host function %q returned invalid JSON", name)}
	}
	return reply
}

// Handler serves one host function: its arguments are the call's JSON
// array; the outcome becomes a reply as in [Reply].
type Handler func(ctx context.Context, args json.RawMessage) (json.RawMessage, error)

// Table is a function table: each host function's name, kind and handler.
// A job's declarations ([Table.Functions]) and its dispatch ([Table.Call])
// both come from it, so they cannot disagree. Build it with Sync and Async
// before the run; it is then read-only and safe for concurrent calls.
type Table struct {
	functions []Function
	handlers  map[string]Handler
	checked   map[string]bool // functions added with AsyncChecked
}

// Sync adds a sync function (it returns its result to the script directly)
// and returns t.
func (t *Table) Sync(name string, h Handler) *Table { return t.add(Function{Name: name}, h) }

// Async adds an async function (it returns a promise) and returns t.
func (t *Table) Async(name string, h Handler) *Table {
	return t.add(Function{Name: name, Async: true}, h)
}

// AsyncChecked adds an async function whose handler returns only valid
// JSON values (built or validated by the handler), which [Dispatch] then
// passes on without scanning them again; it returns t.
func (t *Table) AsyncChecked(name string, h Handler) *Table {
	t.add(Function{Name: name, Async: true}, h)
	if t.checked == nil {
		t.checked = map[string]bool{}
	}
	t.checked[name] = true
	return t
}

func (t *Table) add(f Function, h Handler) *Table {
	if t.handlers == nil {
		t.handlers = map[string]Handler{}
	}
	if _, dup := t.handlers[f.Name]; dup {
		panic(fmt.Sprintf("v8sandbox: host function %q declared twice", f.Name))
	}
	t.functions = append(t.functions, f)
	t.handlers[f.Name] = h
	return t
}

// Functions returns the declarations for [Job].Functions, in the order the
// functions were added.
func (t *Table) Functions() []Function { return slices.Clone(t.functions) }

// Call implements [Host]: it runs the named function's handler.
func (t *Table) Call(ctx context.Context, call HostCall) HostReply {
	h, ok := t.handlers[call.Name]
	if !ok {
		return HostReply{Error: &HostError{Message: fmt.Sprintf("unknown host function %q", call.Name)}}
	}
	r := Reply(h(ctx, call.Args))
	r.Checked = t.checked[call.Name] && r.Error == nil && r.Fatal == nil
	return r
}
