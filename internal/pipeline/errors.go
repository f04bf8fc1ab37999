package pipeline

import (
	"fmt"

	"github.com/isogate/isogate/v8sandbox"
)

// The pipeline's error codes, why it refused a call, in the one vocabulary
// of [v8sandbox.Code] ([v8sandbox.CodeOf] reads them). Each message starts
// with its code, and a program's catch sees the code as data too:
// e.code === "TOOL_DENIED".
const (
	// CodeToolDenied: the configuration denies the tool, or does not allow it.
	CodeToolDenied v8sandbox.Code = "TOOL_DENIED"
	// CodeToolBudget: the run has made sandbox.max_tool_calls calls already.
	CodeToolBudget v8sandbox.Code = "TOOL_BUDGET"
	// CodeApprovalDenied: the person declined or cancelled the approval.
	CodeApprovalDenied v8sandbox.Code = "APPROVAL_DENIED"
	// CodeApprovalRequired: the tool needs approval and the client cannot
	// ask (no elicitation support).
	CodeApprovalRequired v8sandbox.Code = "APPROVAL_REQUIRED"
	// CodePlanDenied: a type-checked program may call a tool the
	// configuration denies; it was refused before it ran (AdmitPlan).
	CodePlanDenied v8sandbox.Code = "PLAN_DENIED"
	// CodeInvalidArguments: the call's arguments do not fit the tool's
	// input schema (an unknown parameter where the schema forbids extras, a
	// missing required one, a value of the wrong type, …); the call was
	// not made (ArgumentsStage).
	CodeInvalidArguments v8sandbox.Code = "INVALID_ARGUMENTS"
)

// Error is a call the pipeline refused.
type Error struct {
	Code    v8sandbox.Code
	Message string
}

// Error implements error: "CODE: message".
func (e *Error) Error() string { return string(e.Code) + ": " + e.Message }

// ErrorCode implements [v8sandbox.Coded].
func (e *Error) ErrorCode() v8sandbox.Code { return e.Code }

func errorf(code v8sandbox.Code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}
