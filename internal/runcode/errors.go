package runcode

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/isogate/isogate/v8sandbox"
)

// Error types of [ErrorInfo].
const (
	ValidationError = "ValidationError"
	TimeoutError    = "TimeoutError"
	VMError         = "VMError"
)

// ErrorInfo describes why a run failed.
type ErrorInfo struct {
	// Type is ValidationError, TimeoutError or VMError.
	Type    string `json:"type"`
	Message string `json:"message"`
	// Name is the JavaScript error's name ("RangeError", …) when the code threw.
	Name string `json:"name,omitempty"`
	// Stack is the JavaScript stack trace, when there is one.
	Stack string `json:"stack,omitempty"`
}

// engineError maps an engine error to the tool's error types.
func engineError(err error, code string) *ErrorInfo {
	var e *v8sandbox.Error
	if !errors.As(err, &e) {
		return &ErrorInfo{Type: VMError, Message: "internal error: " + err.Error()}
	}
	switch e.Code {
	case v8sandbox.CodeTimeout:
		return &ErrorInfo{Type: TimeoutError, Message: e.Message}
	case v8sandbox.CodeEval:
		info := &ErrorInfo{Type: VMError, Message: e.Message + sourceLocation(e, code), Stack: fixStack(e.Stack)}
		if name, _, ok := strings.Cut(e.Message, ":"); ok && strings.HasSuffix(name, "Error") && !strings.Contains(name, " ") {
			info.Name = name
		}
		return info
	case v8sandbox.CodeHeapLimit:
		return &ErrorInfo{Type: VMError, Message: "out of memory: " + e.Message}
	case v8sandbox.CodeOutputLimit:
		return &ErrorInfo{Type: VMError, Message: "output too large: " + e.Message}
	case v8sandbox.CodeCancelled:
		return &ErrorInfo{Type: VMError, Message: "cancelled: " + e.Message}
	default:
		return &ErrorInfo{Type: VMError, Message: "internal error: " + e.Message}
	}
}

// sourceLocation locates an error the engine reports at the script level
// (a syntax error) in the code as written.
func sourceLocation(e *v8sandbox.Error, code string) string {
	if e.Line <= 0 {
		return ""
	}
	if e.Line > strings.Count(code, "\n")+1 {
		return " (at the end of the code)"
	}
	col := e.Column
	if e.Line == 1 {
		col -= len(sourcePrefix)
	}
	return fmt.Sprintf(" (line %d, column %d)", e.Line, col)
}

// envelope is what the prelude's runner resolves to.
type envelope struct {
	OK     *bool           `json:"ok"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Name    string `json:"name"`
		Message string `json:"message"`
		Stack   string `json:"stack"`
	} `json:"error"`
}

func decodeEnvelope(value json.RawMessage) (json.RawMessage, *ErrorInfo) {
	var env envelope
	if err := json.Unmarshal(value, &env); err != nil || env.OK == nil {
		return nil, &ErrorInfo{Type: VMError, Message: "internal error: the code's completion value is not a run_code result " +
			"(the code must not close the function it runs in)"}
	}
	if !*env.OK {
		if env.Error == nil {
			return nil, &ErrorInfo{Type: VMError, Message: "the code failed without an error value"}
		}
		msg := env.Error.Message
		if env.Error.Name != "" {
			msg = env.Error.Name + ": " + msg
		}
		return nil, &ErrorInfo{Type: VMError, Message: msg, Name: env.Error.Name, Stack: env.Error.Stack}
	}
	if len(env.Result) == 0 {
		return json.RawMessage("null"), nil
	}
	return env.Result, nil
}
