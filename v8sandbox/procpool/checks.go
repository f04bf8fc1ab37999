package procpool

import (
	"context"
	"encoding/json"
	"errors"
	"sync/atomic"
	"time"

	"github.com/isogate/isogate/v8sandbox"
)

// checkerStartTimeout bounds a checker worker's start, which includes
// loading its checker (the TypeScript compiler and its libraries: ~1.3 s of
// CPU with no code cache in a fresh process), many seconds of wall time on
// a loaded machine.
const checkerStartTimeout = time.Minute

// A CheckServer answers the runs of a checker worker ([Options].Checker)
// in place of a V8 pool: each run's source is a request and its value the
// reply, as the server defines them (internal/typecheck/checkworker's type
// checks). It runs under the worker's confinement.
type CheckServer interface {
	// Answer answers the run whose source is source, within ctx: it ends
	// at the run's deadline or when the parent cancels the run.
	Answer(ctx context.Context, source string) (json.RawMessage, error)
	// CodeCache returns, once, the code cache the server made as it
	// started (for the parent to keep: [Options].CheckerCache), and
	// whether it took the one the parent sent.
	CodeCache() (made []byte, loaded bool)
	// Close releases the server once its runs have ended.
	Close()
}

// CheckServerFunc starts a checker worker's server, with the code cache the
// parent sent (nil: none), before the worker reports ready.
type CheckServerFunc func(ctx context.Context, codeCache []byte) (CheckServer, error)

// checkServerFunc is what RegisterChecker registered; nil: none.
var checkServerFunc atomic.Pointer[CheckServerFunc]

// RegisterChecker makes this binary's workers serve as checker workers
// with the servers start makes. A package that runs a checker in workers
// registers it at init, so that the binary linking it is its worker.
func RegisterChecker(start CheckServerFunc) { checkServerFunc.Store(&start) }

// newCheckServer starts the registered checker's server.
func newCheckServer(ctx context.Context, codeCache []byte) (CheckServer, error) {
	start := checkServerFunc.Load()
	if start == nil {
		return nil, errors.New("this binary has no checker (procpool.RegisterChecker)")
	}
	return (*start)(ctx, codeCache)
}

// startCheck serves run id of a checker worker: the server's answer within
// the run's timeout, cancelled by the parent's cancel frame.
func (s *server) startCheck(ctx context.Context, id uint64, job v8sandbox.Job) {
	runCtx, cancel := context.WithCancel(ctx)
	if timeout := job.Limits.Timeout; timeout > 0 {
		runCtx, cancel = context.WithTimeout(ctx, timeout)
	}
	if !s.register(id, cancel, nil) {
		return
	}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		defer func() {
			s.mu.Lock()
			delete(s.runs, id)
			s.mu.Unlock()
			cancel()
		}()
		start := time.Now()
		value, err := s.checks.Answer(runCtx, job.Source)
		if err == nil {
			var frame []byte
			if frame, err = encodeResult(id, &v8sandbox.Result{Value: value, Duration: time.Since(start)}); err == nil {
				err = s.write(frame)
			}
		}
		if errors.Is(err, errFrameTooLarge) {
			err = s.send(&message{Type: msgResult, ID: id, Err: v8sandbox.Errorf(v8sandbox.CodeOutputLimit,
				"check report of %d bytes exceeds the sandbox protocol's frame limit", len(value))})
		}
		if err != nil {
			s.logger.Warn("check report not sent", "id", id, "err", err)
		}
	}()
}

// LastFailure is why p's first slot that lost its process last lost it (a
// start that failed, a death); nil when none has.
func (p *Pool) LastFailure() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, s := range p.slots {
		if s.lastErr != nil {
			return s.lastErr
		}
	}
	return nil
}

// Serving reports whether one of p's slots has a live process taking runs
// (not one being killed, drained or stopped).
func (p *Pool) Serving() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, s := range p.slots {
		if pr := s.cur; pr != nil && !pr.dead && !pr.draining && !pr.stopping && pr.reason == killNone {
			return true
		}
	}
	return false
}

// AwaitServing waits, while ctx allows, until p is [Pool.Serving].
func (p *Pool) AwaitServing(ctx context.Context) bool {
	for {
		p.mu.Lock()
		changed := p.changed
		p.mu.Unlock()
		if p.Serving() {
			return true
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return false
		}
	}
}

// Spawned is the number of worker processes p has started.
func (p *Pool) Spawned() uint64 { return p.spawned.Load() }
