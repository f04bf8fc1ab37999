package runcode

import (
	"context"
	"encoding/json"

	"github.com/isogate/isogate/v8sandbox"
)

// State serves the state.* functions of run_code (run_code.state): the
// caller's own key-value store (a *state.State). op is get, set, delete or
// list, args its arguments as a JSON object; the principal is the
// context's.
type State interface {
	Call(ctx context.Context, op string, args json.RawMessage) (json.RawMessage, error)
}

// stateFunctions are the state.* functions and how each one's positional
// arguments name the fields of the object State.Call takes ("": the
// argument is an options object whose fields are taken as they are).
var stateFunctions = []struct {
	op     string
	fields []string
}{
	{"get", []string{"key"}},
	{"set", []string{"key", "value", ""}},
	{"delete", []string{"key"}},
	{"list", []string{""}},
}

// stateDescription is the paragraph of the tool's description that offers
// state.* (run_code.state).
const stateDescription = "\n\nstate (async, call with await): state.get(key) -> the value or undefined; state.set(key, value, {ttl?: seconds}); " +
	"state.delete(key) -> whether it was there; state.list({prefix?, after?, limit?}) -> keys. Your own key-value store (JSON values), " +
	"kept between runs; errors carry e.code (STATE_QUOTA_EXCEEDED, STATE_INVALID, STORE_UNAVAILABLE)."

// stateInvalid is the STATE_INVALID of a state.<op> call whose arguments
// prelude.js could not serialize; args is [op, why].
func stateInvalid(args json.RawMessage) error {
	var a []string
	if err := json.Unmarshal(args, &a); err != nil || len(a) != 2 {
		return &v8sandbox.HostError{Code: "STATE_INVALID", Message: "STATE_INVALID: state: arguments that cannot be stored as JSON"}
	}
	return &v8sandbox.HostError{Code: "STATE_INVALID", Message: "STATE_INVALID: state." + a[0] + ": " + a[1]}
}

// stateCall turns a state.<op> call's positional arguments into the
// object State.Call takes and makes the call.
func (s *session) stateCall(ctx context.Context, op string, fields []string, raw json.RawMessage) (json.RawMessage, error) {
	var args []json.RawMessage
	if err := json.Unmarshal(raw, &args); err != nil || len(args) > len(fields) {
		return nil, &v8sandbox.HostError{Code: "STATE_INVALID", Message: "STATE_INVALID: state." + op + ": too many arguments"}
	}
	if op == "set" && len(args) < 2 {
		return nil, &v8sandbox.HostError{Code: "STATE_INVALID", Message: "STATE_INVALID: state.set(key, value): the value is missing (use state.delete to remove a key)"}
	}
	obj := map[string]json.RawMessage{}
	for i, a := range args {
		if fields[i] != "" {
			obj[fields[i]] = a
			continue
		}
		if string(a) == "null" {
			continue
		}
		var opts map[string]json.RawMessage
		if err := json.Unmarshal(a, &opts); err != nil {
			return nil, &v8sandbox.HostError{Code: "STATE_INVALID", Message: "STATE_INVALID: state." + op + ": the options must be an object"}
		}
		for k, v := range opts {
			obj[k] = v
		}
	}
	b, _ := json.Marshal(obj)
	return s.state.Call(ctx, op, b)
}
