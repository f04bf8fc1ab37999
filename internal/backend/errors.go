package backend

import (
	"errors"
	"fmt"
	"time"
)

// Sentinel errors. Errors returned by [Manager] wrap one of these where
// applicable, so callers can classify them with errors.Is; the typed errors
// below carry details for errors.As.
var (
	// ErrUnknownBackend reports a call to a backend name that is not
	// configured. See [UnknownBackendError].
	ErrUnknownBackend = errors.New("unknown backend")
	// ErrStarting reports that a backend had not finished its first
	// connection within [Options.StartWait]. See [StartingError].
	ErrStarting = errors.New("backend is still starting")
	// ErrUnavailable reports that a backend is unhealthy (crashed, failing
	// health checks, out of restart budget, misconfigured) or stopped. See
	// [UnavailableError].
	ErrUnavailable = errors.New("backend unavailable")
	// ErrTimeout reports that a tool call exceeded [Spec.Timeout]. Errors
	// wrapping ErrTimeout also match context.DeadlineExceeded.
	ErrTimeout = errors.New("backend call timed out")
	// ErrConnectionLost reports that the connection to the backend broke
	// while a call was in flight. The call may or may not have executed, so
	// it is not retried automatically.
	ErrConnectionLost = errors.New("backend connection lost")
	// ErrClosed reports use of a [Manager] after [Manager.Close].
	ErrClosed = errors.New("backend manager closed")
)

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

// timeoutError builds the error for a call that exceeded its per-call
// timeout. It wraps both ErrTimeout and context.DeadlineExceeded.
func timeoutError(backend, tool string, d time.Duration, cause error) error {
	return fmt.Errorf("backend %q: tool %q: %w after %s: %w", backend, tool, ErrTimeout, d, cause)
}

// Code classifies the errors of this package, so that callers can switch on
// a code rather than on message text. See [CodeOf].
type Code string

// The codes of [CodeOf].
const (
	// CodeUnknownBackend: [ErrUnknownBackend].
	CodeUnknownBackend Code = "UNKNOWN_BACKEND"
	// CodeStarting: [ErrStarting], still on its first connection after
	// the wait.
	CodeStarting Code = "BACKEND_STARTING"
	// CodeUnavailable: [ErrUnavailable], the backend is down.
	CodeUnavailable Code = "BACKEND_UNAVAILABLE"
	// CodeTimeout: [ErrTimeout], the backend's own per-call timeout (not
	// the caller's context deadline).
	CodeTimeout Code = "BACKEND_TIMEOUT"
	// CodeConnectionLost: [ErrConnectionLost].
	CodeConnectionLost Code = "BACKEND_CONNECTION_LOST"
	// CodeClosed: [ErrClosed].
	CodeClosed Code = "BACKEND_CLOSED"
)

// CodeOf returns the [Code] of an error returned by a [Manager] (possibly
// wrapped), or "" for errors that have none, such as the caller's own
// context ending or an error response of the backend.
func CodeOf(err error) Code {
	for _, c := range []struct {
		target error
		code   Code
	}{
		{ErrUnknownBackend, CodeUnknownBackend},
		{ErrStarting, CodeStarting},
		{ErrUnavailable, CodeUnavailable},
		{ErrTimeout, CodeTimeout},
		{ErrConnectionLost, CodeConnectionLost},
		{ErrClosed, CodeClosed},
	} {
		if errors.Is(err, c.target) {
			return c.code
		}
	}
	return ""
}
