package v8sandbox

import (
	"context"
	"errors"
	"time"
)

// StopReason is the error a run ends with because it was stopped from
// outside: CANCELLED when the caller cancelled ctx, TIMEOUT when ctx's
// deadline passed or expired reports that the run's own deadline did. It is
// nil while neither happened. Both runners (the in-process pool and the
// worker-process pool) decide through it, so they report the same code.
func StopReason(ctx context.Context, expired bool, timeout time.Duration) *Error {
	switch err := ctx.Err(); {
	case errors.Is(err, context.Canceled):
		return Errorf(CodeCancelled, "execution cancelled by the caller")
	case err != nil || expired:
		return Errorf(CodeTimeout, "execution exceeded %d ms", timeout.Milliseconds())
	}
	return nil
}

// WaitError is the error of a run whose ctx ended before it started
// (while doing, for example "waiting for a free sandbox worker"): TIMEOUT
// when ctx's deadline passed, else CANCELLED.
func WaitError(ctx context.Context, doing string) *Error {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return Errorf(CodeTimeout, "deadline exceeded while %s", doing)
	}
	return Errorf(CodeCancelled, "cancelled while %s", doing)
}

// Settle decides a finished run's error when stop (from [StopReason]) may be
// set: the stop reason wins over what the script itself ended with, a
// result or an EVAL_ERROR the stop caused (a host call failed with "context
// canceled" and the script did not catch it), and over a stop reported
// with the other code. A heap limit, an output limit, a host function's
// fatal error or a crashed worker keep their own code.
func Settle(err, stop *Error) *Error {
	if stop == nil {
		return err
	}
	if err == nil {
		return stop
	}
	switch err.Code {
	case CodeEval, CodeCancelled, CodeTimeout:
		return stop
	}
	return err
}
