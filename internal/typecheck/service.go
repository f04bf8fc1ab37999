package typecheck

import "context"

// Service checks programs for code mode. [Checker] checks them in this
// process (thread isolation); in process isolation the compiler runs in a
// confined worker process instead (checkworker.Checker), since the program
// text it parses is the attacker's.
type Service interface {
	// Check checks a program against decls, as [Checker.Check] does: an
	// error wraps [ErrUnchecked] and says why ([ErrTimeout],
	// [ErrTooComplex], [ErrUnavailable]).
	Check(ctx context.Context, decls Declarations, program string, module bool) (*Report, error)
	// Submit checks a program for a principal, as [Checker.Submit] does:
	// it waits while ctx allows for the checker and a lane of the
	// principal's share, then checks within req.Budget.
	Submit(ctx context.Context, req Request) (*Report, error)
	// Ready reports whether a check now costs only the check (the compiler
	// is loaded, and in a worker that is alive).
	Ready() bool
	// Warm loads the compiler now, waiting until it can check.
	Warm(ctx context.Context) error
	// WarmInBackground starts loading the compiler without waiting.
	WarmInBackground()
	// Status reports the checker's state for operators, without waiting
	// for a check in progress.
	Status() Status
}

var _ Service = (*Checker)(nil)
