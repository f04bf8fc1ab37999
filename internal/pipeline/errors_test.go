package pipeline

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/isogate/isogate/internal/backend"
	"github.com/isogate/isogate/v8sandbox"
)

// TestOneCodeOf proves that the one v8sandbox.CodeOf reads the code of an
// error of every origin (the engine, a backend, the pipeline), however it
// is wrapped, and "" from an error that has none. The wanted codes are
// spelled out: the strings are a public contract (e.code, records, logs).
func TestOneCodeOf(t *testing.T) {
	wrap := func(err error) error { return fmt.Errorf("outer: %w", fmt.Errorf("inner: %w", err)) }
	for _, c := range []struct {
		name string
		err  error
		want string
	}{
		// The engine.
		{"sandbox error", wrap(v8sandbox.Errorf(v8sandbox.CodeHeapLimit, "too big")), "HEAP_LIMIT"},
		{"sandbox crash", wrap(v8sandbox.Errorf(v8sandbox.CodeSandboxCrashed, "died")), "SANDBOX_CRASHED"},
		{"host error", wrap(&v8sandbox.HostError{Code: "TOOL_ERROR", Message: "m"}), "TOOL_ERROR"},
		{"host error without a code", wrap(&v8sandbox.HostError{Message: "m"}), ""},
		// A backend: its sentinels, its typed errors, and both joined with a cause.
		{"backend unknown", wrap(&backend.UnknownBackendError{Backend: "x"}), "UNKNOWN_BACKEND"},
		{"backend starting", wrap(&backend.StartingError{Backend: "x"}), "BACKEND_STARTING"},
		{"backend unavailable", wrap(&backend.UnavailableError{Backend: "x"}), "BACKEND_UNAVAILABLE"},
		{"backend starting sentinel", wrap(backend.ErrStarting), "BACKEND_STARTING"},
		{"backend unavailable sentinel", wrap(backend.ErrUnavailable), "BACKEND_UNAVAILABLE"},
		{"backend unknown sentinel", wrap(backend.ErrUnknownBackend), "UNKNOWN_BACKEND"},
		{"backend timeout", wrap(fmt.Errorf("%w after 1s: %w", backend.ErrTimeout, context.DeadlineExceeded)), "BACKEND_TIMEOUT"},
		{"backend connection lost", wrap(fmt.Errorf("%w: %w", backend.ErrConnectionLost, errors.New("EOF"))), "BACKEND_CONNECTION_LOST"},
		{"backend closed", wrap(backend.ErrClosed), "BACKEND_CLOSED"},
		// The pipeline.
		{"tool denied", wrap(errorf(CodeToolDenied, "no")), "TOOL_DENIED"},
		{"tool budget", wrap(errorf(CodeToolBudget, "enough")), "TOOL_BUDGET"},
		{"approval denied", wrap(errorf(CodeApprovalDenied, "declined")), "APPROVAL_DENIED"},
		{"approval required", wrap(errorf(CodeApprovalRequired, "ask")), "APPROVAL_REQUIRED"},
		// No code.
		{"nil", nil, ""},
		{"plain", errors.New(`backend "x" is unavailable: BACKEND_TIMEOUT`), ""},
		{"wrapped plain", wrap(errors.New("boom")), ""},
		{"context", wrap(context.Canceled), ""},
	} {
		if got := v8sandbox.CodeOf(c.err); string(got) != c.want {
			t.Errorf("%s: CodeOf(%v) = %q, want %q", c.name, c.err, got, c.want)
		}
	}
	// The sentinels still classify with errors.Is, and keep their messages.
	if err := wrap(&backend.UnavailableError{Backend: "x"}); !errors.Is(err, backend.ErrUnavailable) || errors.Is(err, backend.ErrStarting) {
		t.Errorf("errors.Is(%v, ErrUnavailable) does not hold alone", err)
	}
	if got := backend.ErrTimeout.Error(); got != "backend call timed out" {
		t.Errorf("ErrTimeout.Error() = %q", got)
	}
}
