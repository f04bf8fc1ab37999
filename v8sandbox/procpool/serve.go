package procpool

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/isogate/isogate/v8sandbox"
)

// Serve is the worker side of the protocol: it reads frames from r, runs
// jobs on an in-process [v8sandbox.Pool] and writes frames to w, until r
// ends (the parent closed the pipe or died) or ctx ends (r is closed then, if
// it is an io.Closer). The first frame must be the parent's init; Serve
// answers it with ready once V8 is up. After sending a run's result, the
// worker prepares that slot's next run only once the parent's taken frame
// for it arrives (or ctx ends).
//
// A malformed frame ends Serve with an error: the parent is broken and
// there is nobody to report to.
func Serve(ctx context.Context, r io.Reader, w io.Writer, logger *slog.Logger) error {
	return serve(ctx, r, w, logger, nil, nil, nil)
}

// serve is Serve for a worker that reports its confinement (facts) in its
// ready frame and makes its host calls on lanes when one is free; st
// (nil: none) holds the stamps of its start so far, sent in ready.
func serve(ctx context.Context, r io.Reader, w io.Writer, logger *slog.Logger, facts *workerFacts, lanes []*lane, st *stamps) error {
	if logger == nil {
		logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	fr := newFrameReader(r)
	fr.fromParent = true
	first, err := fr.read()
	if err != nil {
		return fmt.Errorf("reading init: %w", err)
	}
	if first.Type != msgInit || first.Init == nil {
		return fmt.Errorf("%w: first frame is %q, want init", errProtocol, first.Type)
	}
	if first.Version != protocolVersion {
		return fmt.Errorf("%w: parent speaks protocol %d, this worker %d", errProtocol, first.Version, protocolVersion)
	}
	if err := checkStartupKey(first.Init.StartupKey); err != nil { // workerbinary.go
		return err
	}
	slots := max(first.Init.Slots, 1)
	var snapshot []byte
	if n := first.Init.SnapshotBytes; n != 0 {
		if snapshot, err = fr.readRaw(n); err != nil {
			return fmt.Errorf("reading the startup snapshot: %w", err)
		}
	}
	st.add(phaseInitRead, false)

	s := &server{
		w:      w,
		logger: logger,
		runs:   map[uint64]context.CancelFunc{},
		taken:  map[uint64]chan struct{}{},
		calls:  map[uint64]chan *message{},
		lanes:  &freeLanes{free: lanes},
	}
	if first.Init.Checker {
		// A checker worker runs no program: its runs are checks.
		if s.checks, err = newCheckServer(ctx, first.Init.CodeCache); err != nil {
			return err
		}
	} else {
		s.pool = v8sandbox.NewPool(v8sandbox.Options{
			Workers:      slots,
			RecycleAfter: first.Init.RecycleAfter,
			Defaults:     v8sandbox.Limits{HeapMB: first.Init.HeapMB},
			Logger:       logger,
		})
		st.add(phaseV8Platform, false)
	}
	ctx, cancelAll := context.WithCancel(ctx)
	defer s.shutdown(cancelAll)

	ready := &message{Type: msgReady, Version: protocolVersion, PID: os.Getpid(), Confine: facts}
	if s.pool != nil {
		startWarm(first.Init, snapshot, s.pool, ready, logger, st) // snapshot.go
	}
	if s.checks != nil {
		made, loaded := s.checks.CodeCache()
		ready.CodeCacheLoaded = loaded
		if first.Init.KeepCodeCache {
			ready.CodeCache = made
		}
	}
	if st != nil {
		st.add(phaseReadySent, false)
		ready.Stamps = st.list
	}
	if err := s.send(ready); err != nil {
		return fmt.Errorf("sending ready: %w", err)
	}

	// Frames are read on a goroutine of their own, which hands a reply
	// straight to the V8 thread waiting for it and runs a job itself (see
	// readFrames). ctx ending closes r when it can be closed, which ends
	// the read.
	stop := context.AfterFunc(ctx, func() {
		if c, ok := r.(io.Closer); ok {
			c.Close()
		}
	})
	defer stop()
	s.readEnd = make(chan error, 1)
	go s.readFrames(ctx, fr)
	if err := <-s.readEnd; err != nil {
		if ctx.Err() != nil || errors.Is(err, io.EOF) {
			return nil // the parent closed our stdin (or we were told to stop)
		}
		return err
	}
	return nil
}

// readFrames handles the parent's frames until the stream ends or one is
// malformed, and reports why on s.readEnd. Handling never blocks: a reply
// goes straight to the V8 thread waiting for it. A run frame's job is run
// by the goroutine that read it, after it has handed the reading on to a
// new goroutine: the job starts on the thread the kernel woke for its
// frame, without waking another one first (a wake-up costs tens of µs on a
// busy 2-core machine, the whole of a trivial run).
func (s *server) readFrames(ctx context.Context, fr *frameReader) {
	for {
		m, err := fr.read()
		if err != nil {
			s.readEnd <- err
			return
		}
		run, err := s.handle(ctx, m)
		if err != nil {
			s.readEnd <- err
			return
		}
		if run != nil {
			go s.readFrames(ctx, fr)
			run()
			return
		}
	}
}

// server is the state of one Serve call.
type server struct {
	wmu    sync.Mutex
	w      io.Writer
	logger *slog.Logger
	pool   *v8sandbox.Pool // nil in a checker worker
	checks CheckServer     // a checker worker's server (checks.go)

	preludes preludeCache // held preludes, used by the read loop only

	mu       sync.Mutex
	runs     map[uint64]context.CancelFunc // runs in progress by id
	taken    map[uint64]chan struct{}      // runs whose result was sent, until the parent has it
	calls    map[uint64]chan *message      // host calls awaiting a reply
	nextCall atomic.Uint64
	wg       sync.WaitGroup // run goroutines
	lanes    *freeLanes     // free call lanes
	readEnd  chan error     // why reading the parent's frames ended
}

// handle handles one frame of the parent's. For a run frame it may return
// the run, for the caller to call (on its own goroutine).
func (s *server) handle(ctx context.Context, m *message) (run func(), err error) {
	switch m.Type {
	case msgRun:
		if m.Job == nil || m.ID == 0 {
			return nil, fmt.Errorf("%w: run frame without id or job", errProtocol)
		}
		job := *m.Job
		if m.PreludeRef != "" {
			if job.Prelude != "" {
				s.preludes.add(m.PreludeRef, job.Prelude)
			} else if text, ok := s.preludes.get(m.PreludeRef); ok {
				job.Prelude = text
			} else {
				return nil, s.send(&message{Type: msgResult, ID: m.ID, Err: v8sandbox.Errorf(v8sandbox.CodeInternal,
					"sandbox worker does not hold prelude %s", m.PreludeRef)})
			}
		}
		return s.startRun(ctx, m.ID, job), nil
	case msgCancel:
		s.mu.Lock()
		cancel := s.runs[m.ID]
		s.mu.Unlock()
		if cancel != nil {
			cancel()
		}
	case msgTaken:
		s.mu.Lock()
		ch := s.taken[m.ID]
		delete(s.taken, m.ID)
		s.mu.Unlock()
		if ch != nil {
			close(ch)
		}
	case msgReply:
		s.mu.Lock()
		ch := s.calls[m.Call]
		delete(s.calls, m.Call)
		s.mu.Unlock()
		if ch != nil {
			ch <- m // buffered; the caller may already be gone
		}
	default:
		return nil, fmt.Errorf("%w: unexpected frame type %q", errProtocol, m.Type)
	}
	return nil, nil
}

// testHookRun, set only by this package's tests, may replace a run by raw
// bytes written to the parent (to simulate a broken worker).
var testHookRun func(job *v8sandbox.Job) []byte

// startRun registers run id and returns the function that runs it (nil
// when there is nothing left to run).
func (s *server) startRun(ctx context.Context, id uint64, job v8sandbox.Job) func() {
	if drillHook != nil {
		if spec, ok := strings.CutPrefix(job.Source, drillPrefix); ok {
			_ = s.send(&message{Type: msgResult, ID: id, Result: &v8sandbox.Result{Value: drillHook(spec)}})
			return nil
		}
	}
	if testHookRun != nil {
		if raw := testHookRun(&job); raw != nil {
			s.wmu.Lock()
			_, _ = s.w.Write(raw)
			s.wmu.Unlock()
			return nil
		}
	}
	if s.checks != nil {
		s.startCheck(ctx, id, job)
		return nil
	}
	runCtx, cancel := context.WithCancel(ctx)
	taken := make(chan struct{})
	if !s.register(id, cancel, taken) {
		return nil
	}
	s.wg.Add(1)
	return func() {
		defer s.wg.Done()
		defer func() {
			s.mu.Lock()
			delete(s.runs, id)
			delete(s.taken, id)
			s.mu.Unlock()
			cancel()
		}()
		// The result goes out before the worker prepares its next context,
		// which waits until the parent's caller has it (msgTaken): on a
		// busy machine the preparation would otherwise delay the parent's
		// wake-up. A run whose parent is gone ends with ctx.
		s.pool.RunThen(runCtx, job, &remoteHost{s: s, run: id}, func(res v8sandbox.Result, err error) {
			if err != nil {
				var e *v8sandbox.Error
				if !errors.As(err, &e) {
					e = v8sandbox.Errorf(v8sandbox.CodeInternal, "%v", err)
				}
				err = s.send(&message{Type: msgResult, ID: id, Err: e})
			} else {
				var frame []byte
				if frame, err = encodeResult(id, &res); err == nil {
					err = s.write(frame)
				}
			}
			if errors.Is(err, errFrameTooLarge) {
				err = s.send(&message{Type: msgResult, ID: id, Err: v8sandbox.Errorf(v8sandbox.CodeOutputLimit,
					"result of %d bytes exceeds the sandbox protocol's frame limit of %d bytes", len(res.Value), MaxFrameBytes)})
			}
			if err == nil {
				select {
				case <-taken:
				case <-ctx.Done():
				}
			}
		})
	}
}

// register files run id with its cancel function (and taken, closed when
// the parent has its result; nil for a check), refusing a duplicate id.
func (s *server) register(id uint64, cancel context.CancelFunc, taken chan struct{}) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, dup := s.runs[id]; dup {
		cancel()
		s.logger.Warn("duplicate run id ignored", "id", id)
		return false
	}
	s.runs[id] = cancel
	if taken != nil {
		s.taken[id] = taken
	}
	return true
}

// send writes one message. Writes are serialized; a write error means the
// parent is gone, which the read loop notices too.
func (s *server) send(m *message) error {
	frame, err := encodeFrame(m)
	if err != nil {
		return err
	}
	return s.write(frame)
}

// write writes one encoded frame.
func (s *server) write(frame []byte) error {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	_, err := s.w.Write(frame)
	return err
}

// shutdown cancels every run, gives them a moment to end and closes the
// pool. A run stuck in a builtin that ignores termination cannot be waited
// for: the process exits anyway.
func (s *server) shutdown(cancelAll context.CancelFunc) {
	cancelAll()
	done := make(chan struct{})
	go func() {
		s.wg.Wait()
		if s.pool != nil {
			s.pool.Close()
		}
		if s.checks != nil {
			s.checks.Close()
		}
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(time.Second):
	}
}

// remoteHost forwards a run's host calls to the parent, which owns the
// backends. A sync host function blocks the calling V8 thread here until
// the reply arrives or the run's context ends.
type remoteHost struct {
	s   *server
	run uint64
}

// maxArgsBytes leaves room for the rest of the call frame.
const maxArgsBytes = MaxFrameBytes - 64<<10

func (h *remoteHost) Call(ctx context.Context, c v8sandbox.HostCall) v8sandbox.HostReply {
	name, args := c.Name, c.Args
	if len(args) > maxArgsBytes {
		return v8sandbox.Reply(nil, fmt.Errorf("arguments of host function %q are too large (%d bytes, maximum %d)", name, len(args), maxArgsBytes))
	}
	s := h.s
	id := s.nextCall.Add(1)
	if l := s.lanes.take(); l != nil {
		return h.callOnLane(l, id, c)
	}
	ch := make(chan *message, 1)
	s.mu.Lock()
	s.calls[id] = ch
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.calls, id)
		s.mu.Unlock()
	}()
	frame, err := encodeCall(h.run, id, c)
	if err == nil {
		err = s.write(frame)
	}
	if err != nil {
		return v8sandbox.HostReply{Fatal: v8sandbox.Errorf(v8sandbox.CodeInternal, "forwarding host call %q: %v", name, err)}
	}
	select {
	case m := <-ch:
		return parentReply(m)
	case <-ctx.Done():
		return v8sandbox.Reply(nil, ctx.Err())
	}
}

// callOnLane makes the call on a free lane, blocking this thread until the
// reply arrives: the parent answers every lane call, and ends the host's
// work with the run (see lanes.go), so the wait is bounded like the run.
// A lane that fails is dropped; the run gets INTERNAL, as when the pipe
// fails.
func (h *remoteHost) callOnLane(l *lane, id uint64, c v8sandbox.HostCall) v8sandbox.HostReply {
	frame, err := encodeCall(h.run, id, c)
	if err != nil {
		h.s.lanes.put(l)
		return v8sandbox.HostReply{Fatal: v8sandbox.Errorf(v8sandbox.CodeInternal, "forwarding host call %q: %v", c.Name, err)}
	}
	m, err := l.call(frame, id)
	if err != nil {
		return v8sandbox.HostReply{Fatal: v8sandbox.Errorf(v8sandbox.CodeInternal, "forwarding host call %q: %v", c.Name, err)}
	}
	h.s.lanes.put(l)
	return parentReply(m)
}

// Start implements [v8sandbox.Starter]: on a free lane, it writes the call
// and returns the wait for its reply, which the V8 thread itself makes (the
// kernel wakes that very thread when the reply lands). It returns nil when
// no lane is free.
func (h *remoteHost) Start(_ context.Context, c v8sandbox.HostCall) func() v8sandbox.HostReply {
	if len(c.Args) > maxArgsBytes {
		return nil
	}
	s := h.s
	l := s.lanes.take()
	if l == nil {
		return nil
	}
	id := s.nextCall.Add(1)
	frame, err := encodeCall(h.run, id, c)
	if err != nil {
		s.lanes.put(l)
	} else {
		err = writeAll(l.out, frame) // on failure the lane is dropped
	}
	if err != nil {
		return func() v8sandbox.HostReply {
			return v8sandbox.HostReply{Fatal: v8sandbox.Errorf(v8sandbox.CodeInternal, "forwarding host call %q: %v", c.Name, err)}
		}
	}
	return func() v8sandbox.HostReply {
		m, err := l.receive(id)
		if err != nil { // the lane is dropped, as in callOnLane
			return v8sandbox.HostReply{Fatal: v8sandbox.Errorf(v8sandbox.CodeInternal, "forwarding host call %q: %v", c.Name, err)}
		}
		s.lanes.put(l)
		return parentReply(m)
	}
}

// parentReply is the reply the parent sent, as its Dispatch made it: a
// value it checked already is not scanned again here (V8 parses it next).
func parentReply(m *message) v8sandbox.HostReply {
	return v8sandbox.HostReply{Value: m.Value, Error: m.Error, Fatal: m.Fatal, Checked: len(m.Value) > 0}
}

var _ v8sandbox.Starter = (*remoteHost)(nil)
