package programs

import (
	"encoding/json"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/isogate/isogate/v8sandbox"
)

// PolicyBackend is what policy rules call saved programs: a rule names a
// program as programs.<name> (server.auth.rules allow, deny), as it names
// a backend's tool as backend.tool.
const PolicyBackend = "programs"

// CodeInvalidArguments is the code of a call whose arguments the
// program's parameters refuse (the same as a backend tool's).
const CodeInvalidArguments v8sandbox.Code = "INVALID_ARGUMENTS"

// Wrap is the program that runs code with args (JSON of an object): code
// reads them as the constant args, declared on its first line so that
// line numbers are the code's. A program is checked at save wrapped as it
// runs.
func Wrap(code string, args json.RawMessage) string {
	if len(args) == 0 || string(args) == "null" {
		args = json.RawMessage("{}")
	}
	lit, _ := json.Marshal(string(args)) // a JSON string is a JavaScript string literal
	return "const args = JSON.parse(" + string(lit) + "); " + code
}

// checkArguments checks a call's arguments against v's parameters and
// returns them as JSON of an object ({} for none).
func checkArguments(v *Version, arguments json.RawMessage) (json.RawMessage, error) {
	if len(arguments) == 0 || string(arguments) == "null" {
		arguments = json.RawMessage("{}")
	}
	var args any
	if err := json.Unmarshal(arguments, &args); err != nil {
		return nil, v8sandbox.Errorf(CodeInvalidArguments, "%s: arguments are not JSON: %v", v.Ref(), err)
	}
	if _, ok := args.(map[string]any); !ok {
		return nil, v8sandbox.Errorf(CodeInvalidArguments, "%s: arguments are an object", v.Ref())
	}
	var s jsonschema.Schema
	if err := json.Unmarshal(v.Params, &s); err != nil {
		return nil, v8sandbox.Errorf(CodeInvalid, "%s: its parameters do not decode: %v", v.Ref(), err)
	}
	rs, err := s.Resolve(nil)
	if err != nil {
		return nil, v8sandbox.Errorf(CodeInvalid, "%s: its parameters: %v", v.Ref(), err)
	}
	if err := rs.Validate(args); err != nil {
		msg := strings.TrimPrefix(err.Error(), "validating root: ")
		return nil, v8sandbox.Errorf(CodeInvalidArguments, "%s: the arguments do not fit its parameters (nothing ran): %s", v.Ref(), msg)
	}
	return arguments, nil
}
