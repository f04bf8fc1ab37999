package codemode

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"fmt"

	"github.com/isogate/isogate/v8sandbox"
)

// Programs' own state (issue 45): state.get, state.set, state.delete and
// state.list in programs, served by Options.State (internal/state) under
// the run's principal. state.js installs the object; its calls reach the
// host as tool calls to the reserved backend stateBackend, so that a
// durable run journals and replays them like any call.

//go:embed state.js
var stateJS string

// stateBackend is the backend name of state calls: no configured backend
// has it (backend names have no ".").
const stateBackend = "isogate.state"

// StateGlobal is the program's name of its state object; a backend of
// that name keeps it.
const StateGlobal = "state"

// CodeStateUnavailable is the code of a state call on an engine without a
// state store; the same as the store's when it does not answer.
const CodeStateUnavailable v8sandbox.Code = "STORE_UNAVAILABLE"

// codeStateInvalid is the code of a state call whose arguments JSON cannot
// carry; the same as the store's for arguments it cannot take
// (state.CodeInvalid).
const codeStateInvalid v8sandbox.Code = "STATE_INVALID"

// unserialisableArgs reports why state.js could not serialize a call's
// arguments, when it sent {unserialisable: why} in their place (a program
// cannot send that field: state.js builds the arguments from named fields).
func unserialisableArgs(args json.RawMessage) (string, bool) {
	if !bytes.Contains(args, []byte(`"unserialisable"`)) {
		return "", false
	}
	var a struct {
		Why *string `json:"unserialisable"`
	}
	if json.Unmarshal(args, &a) != nil || a.Why == nil {
		return "", false
	}
	return *a.Why, true
}

// StateService serves programs' state calls (a *state.State): op is get,
// set, delete or list, args its arguments as JSON; the principal is the
// context's.
type StateService interface {
	Call(ctx context.Context, op string, args json.RawMessage) (json.RawMessage, error)
}

// stateCall serves call seq of the program, a state operation. In a
// durable run it is journalled as a call (its outcome, a read's value
// too) and a replay answers it from the journal; every operation may be
// made again when its outcome is unknown (idempotent: a set writes the
// same value, a delete removes the same key).
func (h *bridgeHost) stateCall(ctx context.Context, op string, args json.RawMessage, seq int, note callNote) (json.RawMessage, error) {
	live := func(ctx context.Context) (json.RawMessage, error) {
		if ctx.Err() != nil {
			return nil, ctx.Err() // the run is over: nothing starts any more
		}
		if why, ok := unserialisableArgs(args); ok {
			return nil, &v8sandbox.HostError{Code: codeStateInvalid,
				Message: fmt.Sprintf("%s: state.%s: %s", codeStateInvalid, op, why)}
		}
		if h.engine.opts.State == nil {
			return nil, &v8sandbox.HostError{Code: CodeStateUnavailable,
				Message: fmt.Sprintf("%s: state.%s: this gateway keeps no state for programs", CodeStateUnavailable, op)}
		}
		return h.engine.opts.State.Call(ctx, op, args)
	}
	if h.durable != nil {
		h.durable.noteClock(note.Clock)
		return h.durable.call(ctx, seq, stateBackend, op, args, note.After, true, live)
	}
	value, err := live(ctx)
	return value, coded(err)
}

// stateDeclarations declares the state object for the checker, unless a
// backend has its name.
func stateDeclarations(v *view) string {
	for _, b := range v.backends {
		if b.Ident == StateGlobal || b.Name == StateGlobal {
			return ""
		}
	}
	return stateDecls
}

// stateTypeName is the state object's interface in the checker's
// declarations: the checker follows it as it follows a backend's, so that
// the plan lists the program's state writes (pipeline.Plan.State).
const stateTypeName = "IsogateState"

// stateDecls are the checker's declarations of the state object.
const stateDecls = "interface " + stateTypeName + ` {
  get<T = any>(key: string): Promise<T | undefined>;
  set(key: string, value: unknown, options?: { ttl?: number }): Promise<void>;
  delete(key: string): Promise<boolean>;
  list(options?: { prefix?: string; after?: string; limit?: number }): Promise<string[]>;
}
declare var state: IsogateState;
`
