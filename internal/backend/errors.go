package backend

import (
	"fmt"
	"time"

	"github.com/isogate/isogate/v8sandbox"
)

// Sentinel errors. Errors returned by [Manager] wrap one of these where
// applicable, so callers can classify them with errors.Is; the typed errors
// below carry details for errors.As. Each carries its code (see
// [v8sandbox.CodeOf]).
var (
	// ErrUnknownBackend reports a call to a backend name that is not
	// configured. See [UnknownBackendError].
	ErrUnknownBackend error = &sentinel{CodeUnknownBackend, "unknown backend"}
	// ErrStarting reports that a backend had not finished its first
	// connection within [Options.StartWait]. See [StartingError].
	ErrStarting error = &sentinel{CodeStarting, "backend is still starting"}
	// ErrUnavailable reports that a backend is unhealthy (crashed, failing
	// health checks, out of restart budget, misconfigured) or stopped. See
	// [UnavailableError].
	ErrUnavailable error = &sentinel{CodeUnavailable, "backend unavailable"}
	// ErrTimeout reports that a tool call exceeded [Spec.Timeout]. Errors
	// wrapping ErrTimeout also match context.DeadlineExceeded.
	ErrTimeout error = &sentinel{CodeTimeout, "backend call timed out"}
	// ErrConnectionLost reports that the connection to the backend broke
	// while a call was in flight. The call may or may not have executed, so
	// it is not retried automatically.
	ErrConnectionLost error = &sentinel{CodeConnectionLost, "backend connection lost"}
	// ErrClosed reports use of a [Manager] after [Manager.Close].
	ErrClosed error = &sentinel{CodeClosed, "backend manager closed"}
)

// sentinel is a sentinel error with a code.
type sentinel struct {
	code    v8sandbox.Code
	message string
}

func (e *sentinel) Error() string             { return e.message }
func (e *sentinel) ErrorCode() v8sandbox.Code { return e.code }

// UnknownBackendError is returned when a call names a backend that is not
// configured. It matches [ErrUnknownBackend] with errors.Is.
type UnknownBackendError struct {
	Backend string
}

// Error implements error.
func (e *UnknownBackendError) Error() string {
	return fmt.Sprintf("unknown backend %q", e.Backend)
}

// Is reports whether target is [ErrUnknownBackend].
func (e *UnknownBackendError) Is(target error) bool { return target == ErrUnknownBackend }

// ErrorCode implements [v8sandbox.Coded]: [CodeUnknownBackend].
func (e *UnknownBackendError) ErrorCode() v8sandbox.Code { return CodeUnknownBackend }

// StartingError is returned when a call reaches a backend that is still
// performing its first connection (for example, while its tools are only
// known from the on-disk cache) and it did not become ready within
// [Options.StartWait]. Its message is exactly `backend "<name>" is still
// starting`. It matches [ErrStarting] with errors.Is.
type StartingError struct {
	Backend string
}

// Error implements error.
func (e *StartingError) Error() string {
	return fmt.Sprintf("backend %q is still starting", e.Backend)
}

// Is reports whether target is [ErrStarting].
func (e *StartingError) Is(target error) bool { return target == ErrStarting }

// ErrorCode implements [v8sandbox.Coded]: [CodeStarting].
func (e *StartingError) ErrorCode() v8sandbox.Code { return CodeStarting }

// UnavailableError is returned when a call reaches a backend that is down
// (its last connection attempt failed, its restart budget is exhausted, its
// spec is invalid), stopped, or did not recover within [Options.StartWait].
// Its message is `backend "<name>" is unavailable: <its last error>`. It
// matches [ErrUnavailable] with errors.Is.
type UnavailableError struct {
	Backend string
	State   State
	// LastError is the backend's last recorded error, if any.
	LastError string
}

// Error implements error.
func (e *UnavailableError) Error() string {
	if e.LastError == "" {
		return fmt.Sprintf("backend %q is unavailable (%s)", e.Backend, e.State)
	}
	return fmt.Sprintf("backend %q is unavailable: %s", e.Backend, e.LastError)
}

// Is reports whether target is [ErrUnavailable].
func (e *UnavailableError) Is(target error) bool { return target == ErrUnavailable }

// ErrorCode implements [v8sandbox.Coded]: [CodeUnavailable].
func (e *UnavailableError) ErrorCode() v8sandbox.Code { return CodeUnavailable }

// timeoutError builds the error for a call that exceeded its per-call
// timeout. It wraps both ErrTimeout and context.DeadlineExceeded.
func timeoutError(backend, tool string, d time.Duration, cause error) error {
	return fmt.Errorf("backend %q: tool %q: %w after %s: %w", backend, tool, ErrTimeout, d, cause)
}

// The codes of this package's errors, in the one vocabulary of
// [v8sandbox.Code]: [v8sandbox.CodeOf] returns them for an error returned by
// a [Manager] (possibly wrapped), and "" for errors that have none, such as
// the caller's own context ending or an error response of the backend.
const (
	// CodeUnknownBackend: [ErrUnknownBackend].
	CodeUnknownBackend v8sandbox.Code = "UNKNOWN_BACKEND"
	// CodeStarting: [ErrStarting], still on its first connection after
	// the wait.
	CodeStarting v8sandbox.Code = "BACKEND_STARTING"
	// CodeUnavailable: [ErrUnavailable], the backend is down.
	CodeUnavailable v8sandbox.Code = "BACKEND_UNAVAILABLE"
	// CodeTimeout: [ErrTimeout], the backend's own per-call timeout (not
	// the caller's context deadline).
	CodeTimeout v8sandbox.Code = "BACKEND_TIMEOUT"
	// CodeConnectionLost: [ErrConnectionLost].
	CodeConnectionLost v8sandbox.Code = "BACKEND_CONNECTION_LOST"
	// CodeClosed: [ErrClosed].
	CodeClosed v8sandbox.Code = "BACKEND_CLOSED"
)
