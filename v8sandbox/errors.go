package v8sandbox

import (
	"errors"
	"fmt"
)

// Code classifies why a run or a call failed. It is the one vocabulary of
// error codes: the engine's own (below), and those of the packages built on
// it (a gateway's backend and call-pipeline codes, TOOL_DENIED, …), which
// declare theirs as Code values. A program sees a code as e.code.
type Code string

// Coded is an error that carries a [Code]. Every error with a code
// implements it, whatever its origin, so that [CodeOf] is the one place a
// code is read from an error.
type Coded interface {
	error
	// ErrorCode returns the error's code.
	ErrorCode() Code
}

// Error codes returned by the engine.
const (
	// CodeEval is a syntax error, an uncaught exception or a rejected main promise.
	CodeEval Code = "EVAL_ERROR"
	// CodeTimeout means the wall-clock limit was reached.
	CodeTimeout Code = "TIMEOUT"
	// CodeHeapLimit means the isolate ran out of its heap allowance.
	CodeHeapLimit Code = "HEAP_LIMIT"
	// CodeOutputLimit means the run produced more output than allowed.
	CodeOutputLimit Code = "OUTPUT_LIMIT"
	// CodeCancelled means the caller's context was cancelled.
	CodeCancelled Code = "CANCELLED"
	// CodeInternal is a failure of the engine or of a host function.
	CodeInternal Code = "INTERNAL"
)

// Error is the typed error of a failed run. It is plain data so it can cross
// a process boundary as JSON.
type Error struct {
	Code    Code   `json:"code"`
	Message string `json:"message"`
	// Stack is the JavaScript stack trace, when there is one.
	Stack string `json:"stack,omitempty"`
	// Line and Column locate the error in the job's source (1-based), when known.
	Line   int `json:"line,omitempty"`
	Column int `json:"column,omitempty"`
	// Compile is set on an EVAL_ERROR raised while compiling the job's
	// source: none of it ran.
	Compile bool `json:"compile,omitempty"`
	// HostCode is set on an EVAL_ERROR whose exception is an error a host
	// function threw into the script with a code (a [HostError]), left
	// uncaught or rethrown: the code the run failed with at its root. A
	// script cannot set it by throwing an object of its own.
	HostCode Code `json:"host_code,omitempty"`
}

// Error implements the error interface.
func (e *Error) Error() string {
	return fmt.Sprintf("%s: %s", e.Code, e.Message)
}

// ErrorCode implements [Coded].
func (e *Error) ErrorCode() Code { return e.Code }

// Errorf returns an *Error with the given code and formatted message.
func Errorf(code Code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// CodeOf returns the code of the first error in err's tree that is [Coded]
// (an *Error, a *HostError with a code, a backend's or a pipeline's error,
// possibly wrapped), or "" when err has none (nil, a plain error, a
// context's end).
func CodeOf(err error) Code {
	var c Coded
	if errors.As(err, &c) {
		return c.ErrorCode()
	}
	return ""
}

// CodeSandboxCrashed means the sandbox worker process running the job died.
const CodeSandboxCrashed Code = "SANDBOX_CRASHED"
