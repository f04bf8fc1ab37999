package pipeline

import (
	"errors"
	"fmt"
)

// Code classifies why the pipeline refused a call.
type Code string

// The pipeline's error codes. Each message starts with its code, and a
// program's catch sees the code as data too: e.code === "TOOL_DENIED".
const (
	// CodeToolDenied: the configuration denies the tool, or does not allow it.
	CodeToolDenied Code = "TOOL_DENIED"
	// CodeToolBudget: the run has made sandbox.max_tool_calls calls already.
	CodeToolBudget Code = "TOOL_BUDGET"
	// CodeApprovalDenied: the person declined or cancelled the approval.
	CodeApprovalDenied Code = "APPROVAL_DENIED"
	// CodeApprovalRequired: the tool needs approval and the client cannot
	// ask (no elicitation support).
	CodeApprovalRequired Code = "APPROVAL_REQUIRED"
)

// Error is a call the pipeline refused.
type Error struct {
	Code    Code
	Message string
}

// Error implements error: "CODE: message".
func (e *Error) Error() string { return string(e.Code) + ": " + e.Message }

func errorf(code Code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// CodeOf returns the code of a refused call, or "" when err is not one.
func CodeOf(err error) Code {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return ""
}
