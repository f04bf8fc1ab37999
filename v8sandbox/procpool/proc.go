package procpool

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/isogate/isogate/internal/textcut"
	"github.com/isogate/isogate/v8sandbox"
)

// Bounds on how much of a worker's stderr reaches the parent's logger.
const (
	maxLoggedLines  = 100
	maxLoggedLineB  = 512
	stderrReadBytes = 4096
)

// killReason records why the parent killed a worker, to type the errors of
// the runs that were on it.
type killReason int

const (
	killNone     killReason = iota
	killDeadline            // a run on it ignored its deadline + grace
	killCancel              // a cancelled run on it did not stop within grace
	killRSS                 // over the hard memory limit
	killProtocol            // it sent a malformed frame
	killStartup             // no handshake in time
	killShutdown            // it did not exit after its stdin was closed
)

// proc is one worker process.
type proc struct {
	pool    *Pool
	slot    int
	cmd     *exec.Cmd
	pid     int
	started time.Time
	oomBase int64 // cgroup oom_kill counter at start
	oomOK   bool

	wmu         sync.Mutex   // serializes frames to the worker
	preludes    preludeCache // what the worker holds (guarded by wmu)
	stdin       *os.File     // the worker's stdin, written with a deadline
	closeInOnce sync.Once
	readyCh     chan struct{} // closed by the ready frame
	released    chan struct{} // closed when the slot must start a replacement
	releaseOnce sync.Once
	stderrDone  chan struct{}
	exited      chan struct{} // closed once death is fully handled

	completed atomic.Uint64 // runs the worker answered
	laneCalls atomic.Uint64 // host calls served on its lanes

	lanes          []*parentLane // call lanes (lanes.go)
	ns             nsLevel       // the namespaces it was spawned with
	confine        *workerFacts  // what it reported in its ready frame
	codeCacheGiven bool          // a checker worker's init carried a code cache
	snapshotAsked  bool          // its init asked for its V8 startup snapshot (snapshot.go)
	snapshotLoaded bool          // it started from the snapshot its init carried
	cgroup         string        // its pids cgroup, "" if none (pidscgroup_linux.go)
	cgroupWhy      string        // why it has none
	cgroupDone     chan struct{} // closed once cgroup and cgroupWhy are set
	cgroupAt       stamp         // when it was joined
	stamps         stamps        // the parent's side of its start until ready (startstamps.go)
	readyAt        stamp         // the ready frame's arrival
	workerStamps   []stamp       // the worker's side, from its ready frame
	startPhases    []StartPhase  // its start, both sides, once ready (guarded by pool.mu)
	stdout, stderr io.ReadCloser

	// Guarded by pool.mu.
	runs        map[uint64]*pending
	draining    bool // no new runs; exits when idle
	stopping    bool // shutdown requested
	dead        bool
	reason      killReason
	detail      string
	idleCrash   bool             // died on its own with no run on it
	deathErr    *v8sandbox.Error // what its runs got
	owner       string           // the principal it serves, once bound
	bound       bool             // owner is set: given a run, or born reserved
	used        bool             // a run was registered on it: it serves owner alone, for good
	spare       bool             // started, never used, waiting in Pool.spares (spares.go)
	parked      bool             // waiting in Pool.idle for owner (idle.go)
	parkOnDrain bool             // draining out of its slot, to be parked once idle
	idleBytes   int64            // what it is counted for while parked

	// Written by the stderr goroutine.
	errMu              sync.Mutex
	oomLine, fatalLine string
	logged, suppressed int
}

// start spawns a worker for a slot and completes the handshake. It spawns
// with the pool's namespace level and falls back to the next one when the
// host refuses it (see nsLevels).
func (p *Pool) start(slot int) (*proc, error) {
	for {
		p.mu.Lock()
		level := p.nsIdx
		p.mu.Unlock()
		ns := p.nsLevels[level]
		pr, cmd, err := p.spawn(slot, ns)
		if err != nil && ns.flags != 0 && level+1 < len(p.nsLevels) {
			p.mu.Lock()
			if p.nsIdx == level {
				p.nsIdx++
				next := p.nsLevels[p.nsIdx]
				next.why = fmt.Sprintf("%s: %v", next.why, err)
				p.nsLevels[p.nsIdx] = next
				p.logger.Info("sandbox workers: namespaces refused, falling back", "tried", strings.Join(ns.names, ","), "err", err)
			}
			p.mu.Unlock()
			continue
		}
		if err != nil {
			return nil, err
		}
		return p.handshake(pr, cmd, ns)
	}
}

// spawn starts a worker process with the namespaces of ns.
func (p *Pool) spawn(slot int, ns nsLevel) (*proc, *exec.Cmd, error) {
	nLanes := lanesFor(p.opts.SlotsPerWorker)
	args := append(p.opts.Command[1:len(p.opts.Command):len(p.opts.Command)], "confine="+p.layers.forWorker(ns).String(),
		lanesArg+strconv.Itoa(nLanes))
	cmd := exec.Command(p.opts.Command[0], args...)
	lanes, childLanes, err := newLanes(nLanes)
	if err != nil {
		return nil, nil, err
	}
	cmd.ExtraFiles = childLanes
	defer func() {
		for _, f := range childLanes {
			f.Close() // the child has its copies (or never started)
		}
	}()
	cmd.Env = []string{} // empty, not nil: nil would mean "inherit"
	cmd.Dir = "/"
	cmd.SysProcAttr = sysProcAttr(ns)
	// The worker's stdin is a pipe of our own (not StdinPipe) so that writes
	// can have a deadline: a worker that stops reading is killed rather than
	// blocking a caller.
	childIn, stdin, err := os.Pipe()
	if err != nil {
		closeParentLanes(lanes)
		return nil, nil, err
	}
	cmd.Stdin = childIn
	closePipes := func() {
		childIn.Close()
		stdin.Close()
		closeParentLanes(lanes)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		closePipes()
		return nil, nil, err
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		closePipes()
		return nil, nil, err
	}
	pr := &proc{
		pool:       p,
		slot:       slot,
		cmd:        cmd,
		stdin:      stdin,
		readyCh:    make(chan struct{}),
		released:   make(chan struct{}),
		stderrDone: make(chan struct{}),
		exited:     make(chan struct{}),
		runs:       map[uint64]*pending{},
		lanes:      lanes,
	}
	pr.oomBase, pr.oomOK = oomKills()
	pr.stamps.add(phaseSpawn, false)
	reply := make(chan error, 1)
	select {
	case p.spawns <- spawnRequest{cmd: cmd, reply: reply}:
	case <-p.stopHelpers:
		closePipes()
		stdout.Close()
		stderr.Close()
		return nil, nil, errors.New("pool closed")
	}
	err = <-reply
	childIn.Close() // the child has its copy
	if err != nil {
		stdin.Close() // Start closed stdout and stderr
		closeParentLanes(lanes)
		return nil, nil, fmt.Errorf("starting %q: %w", p.opts.Command, err)
	}
	pr.stdout, pr.stderr = stdout, stderr
	pr.stamps.add(phaseExeced, false)
	pr.cgroupDone = make(chan struct{})
	if !p.layers.threads {
		close(pr.cgroupDone)
		return pr, cmd, nil
	}
	// While the worker starts up, which runs only its own start-up code:
	// the handshake waits for it before the worker is given any run.
	// Joining a cgroup waits for the kernel (an RCU grace period on cgroup
	// v1: milliseconds, more than the rest of the parent's side of a
	// start), which the worker's start need not wait for.
	go func() {
		defer close(pr.cgroupDone)
		if p.opts.beforeCgroup != nil {
			p.opts.beforeCgroup(pr)
		}
		var err error
		if pr.cgroup, err = p.cgroups.place(cmd.Process.Pid); err != nil {
			pr.cgroupWhy = err.Error()
			if p.cgroups.dir != "" {
				p.logger.Warn("sandbox worker: no pids cgroup", "pid", cmd.Process.Pid, "err", err)
			}
		}
		pr.cgroupAt = stamp{Phase: phaseCgroup, Mono: monoNow(), CPU: -1}
	}()
	return pr, cmd, nil
}

// handshake registers a spawned worker and waits for its ready frame.
func (p *Pool) handshake(pr *proc, cmd *exec.Cmd, ns nsLevel) (*proc, error) {
	stdout, stderr, slot := pr.stdout, pr.stderr, pr.slot
	pr.ns = ns
	var codeCache []byte
	if p.opts.Checker && p.opts.CheckerCache != nil {
		codeCache = p.opts.CheckerCache.Load()
		pr.codeCacheGiven = len(codeCache) > 0
	}
	pr.pid = cmd.Process.Pid
	pr.started = time.Now()
	p.spawned.Add(1)
	p.mu.Lock()
	p.procs[pr] = struct{}{}
	p.mu.Unlock()

	go pr.stderrLoop(stderr)
	go pr.readLoop(stdout)
	for _, l := range pr.lanes {
		go pr.laneLoop(l)
	}

	snapshot, wantSnapshot := p.snapshotFor() // snapshot.go
	pr.snapshotAsked = wantSnapshot
	frame, err := encodeFrame(&message{Type: msgInit, Version: protocolVersion,
		Init: &initConfig{Slots: p.opts.SlotsPerWorker, RecycleAfter: p.opts.RecycleAfter, Checker: p.opts.Checker,
			CodeCache: codeCache, KeepCodeCache: p.opts.Checker && p.opts.CheckerCache != nil,
			SnapshotBytes: len(snapshot), WantSnapshot: wantSnapshot, HeapMB: p.opts.Defaults.HeapMB,
			StartupKey: p.opts.startupKey}})
	if err != nil {
		pr.kill(killStartup, err.Error())
		<-pr.exited
		return nil, err
	}
	frame = append(frame, snapshot...) // the snapshot follows init, raw
	if len(frame) > pipeBytes {
		fitPipe(pr.stdin, len(frame)) // back to pipeBytes once ready
	}
	pr.send(frame)
	pr.stamps.add(phaseInitSent, false)
	startLimit := workerStartTimeout
	if p.opts.startTimeout > 0 {
		startLimit = p.opts.startTimeout
	}
	if p.opts.Checker {
		startLimit = checkerStartTimeout // it loads the compiler first
	}
	timer := time.NewTimer(startLimit)
	defer timer.Stop()
	select {
	case <-pr.readyCh:
		p.logger.Debug("sandbox worker started", "slot", slot, "pid", pr.pid, "startup", time.Since(pr.started))
		<-pr.cgroupDone // in its pids cgroup before any run
		if len(frame) > pipeBytes {
			fitPipe(pr.stdin, pipeBytes) // the worker has read its start-up
		}
		parent := append(pr.stamps.list, pr.readyAt)
		if pr.cgroupAt.Mono != 0 {
			parent = append(parent, pr.cgroupAt)
		}
		phases := timeline(parent, pr.workerStamps)
		p.mu.Lock()
		pr.startPhases = phases
		p.mu.Unlock()
		if err := p.checkConfinement(pr); err != nil {
			pr.kill(killStartup, err.Error())
			<-pr.exited
			return nil, err
		}
		return pr, nil
	case <-pr.exited:
		return nil, fmt.Errorf("worker exited during startup: %s", pr.deathErr.Message)
	case <-timer.C:
		pr.kill(killStartup, "no handshake within "+startLimit.String())
		<-pr.exited
		return nil, fmt.Errorf("worker did not answer the handshake within %v", startLimit)
	case <-p.quit:
		pr.kill(killShutdown, "pool closed during startup")
		<-pr.exited
		return nil, errors.New("pool closed")
	}
}

// writeTimeout bounds one frame write: the worker reads continuously, so a
// write that cannot complete means a frozen worker (SIGSTOP, a wedged
// reader), which is killed.
const writeTimeout = 5 * time.Second

// send writes a frame to the worker; it is dropped if the worker is gone.
// The write happens on the caller's goroutine: no hop on the host-call
// round trip.
func (pr *proc) send(frame []byte) {
	pr.wmu.Lock()
	defer pr.wmu.Unlock()
	pr.writeLocked(frame)
}

// writeLocked writes frame; pr.wmu is held.
func (pr *proc) writeLocked(frame []byte) {
	if isClosed(pr.exited) {
		return
	}
	_ = pr.stdin.SetWriteDeadline(time.Now().Add(writeTimeout))
	if _, err := pr.stdin.Write(frame); err != nil {
		if errors.Is(err, os.ErrDeadlineExceeded) {
			pr.kill(killProtocol, "stopped reading its input")
		}
		// Otherwise the worker is gone (EPIPE) or its stdin was closed;
		// the read loop handles the death.
	}
}

// sendTaken tells the worker that run id's caller has its result, from a
// goroutine of its own: the caller returns without waiting for the write.
// Written by the caller, the frame woke the worker's thread on the
// caller's CPU, where the worker prepared its next context (0.5–1 ms of
// CPU) before the caller ran again: after a run that had made a host
// call, that write took 80 µs at the median and 700 µs at the 75th
// percentile on a busy 2-core machine (BenchmarkTier3OneCall, issue 44).
// The goroutine runs once the scheduler has a thread for it, at the
// latest when the caller's goroutine next blocks.
func (pr *proc) sendTaken(id uint64) {
	go func() {
		if hook := pr.pool.opts.beforeTaken; hook != nil {
			hook()
		}
		pr.send(takenFrame(id))
	}()
}

// sendRun writes a run frame. When the worker does not hold the job's
// prelude (ref) yet, it writes the frame withPrelude returns instead, which
// carries the text: deciding under the write lock keeps the record of what
// the worker holds in pipe order.
func (pr *proc) sendRun(frame []byte, ref string, withPrelude func() ([]byte, error)) error {
	pr.wmu.Lock()
	defer pr.wmu.Unlock()
	if ref != "" {
		if _, held := pr.preludes.get(ref); !held {
			full, err := withPrelude()
			if err != nil {
				return err
			}
			frame = full
			pr.preludes.add(ref, "")
		}
	}
	pr.writeLocked(frame)
	return nil
}

// closeStdin makes the worker exit (it serves until its stdin ends).
func (pr *proc) closeStdin() {
	pr.closeInOnce.Do(func() {
		pr.wmu.Lock()
		defer pr.wmu.Unlock()
		pr.stdin.Close()
		for _, l := range pr.lanes {
			l.replies.Close()
		}
	})
}

// readLoop dispatches the worker's frames until its stdout ends, then
// handles its death.
func (pr *proc) readLoop(stdout io.Reader) {
	fr := newFrameReader(stdout)
	for {
		m, err := fr.read()
		if err == nil {
			err = pr.dispatch(m)
		}
		if err != nil {
			if errors.Is(err, errProtocol) {
				pr.kill(killProtocol, err.Error())
			}
			break
		}
	}
	// Whatever the worker still writes is ignored; stdout ends when it dies.
	go io.Copy(io.Discard, stdout)
	pr.reap()
}

func (pr *proc) dispatch(m *message) error {
	p := pr.pool
	ready := isClosed(pr.readyCh)
	switch {
	case m.Type == msgReady:
		if ready {
			return fmt.Errorf("%w: second ready frame", errProtocol)
		}
		if m.Version != protocolVersion {
			return fmt.Errorf("%w: worker speaks protocol %d, parent %d", errProtocol, m.Version, protocolVersion)
		}
		pr.confine = m.Confine
		if c := p.opts.CheckerCache; c != nil && p.opts.Checker {
			// Made before the worker parsed any program: as trusted as
			// its start.
			if pr.codeCacheGiven {
				c.Loaded(m.CodeCacheLoaded)
			}
			if data := m.CodeCache; len(data) > 0 {
				c.Store(data) // once per first start: a few milliseconds
			}
		}
		// Made before the worker was given any run (snapshot.go).
		p.keepSnapshot(pr, m.Snapshot)
		pr.snapshotLoaded = m.SnapshotLoaded
		pr.readyAt, pr.workerStamps = stamp{Phase: phaseReady, Mono: monoNow(), CPU: -1}, m.Stamps
		close(pr.readyCh)
	case !ready:
		return fmt.Errorf("%w: %q frame before ready", errProtocol, m.Type)
	case m.Type == msgCall:
		if m.ID == 0 || m.Call == 0 || m.Name == "" {
			return fmt.Errorf("%w: call frame without run id, call id or name", errProtocol)
		}
		go func() { // the read loop never blocks on a host call or a write
			if frame, err := pr.answer(m); err == nil {
				pr.send(frame)
			}
		}()
	case m.Type == msgResult:
		if m.ID == 0 || (m.Result == nil) == (m.Err == nil) {
			return fmt.Errorf("%w: result frame needs a run id and exactly one of result or err", errProtocol)
		}
		pr.completed.Add(1)
		p.mu.Lock()
		r := pr.runs[m.ID]
		p.mu.Unlock()
		if r == nil {
			return nil // the parent gave up on it already
		}
		if p.detach(r) {
			o := outcome{err: m.Err}
			if m.Result != nil {
				o.res = *m.Result
			}
			r.done <- o
		}
	default:
		return fmt.Errorf("%w: unexpected frame type %q from worker", errProtocol, m.Type)
	}
	return nil
}

// answer serves a call frame of the worker's and returns the reply frame.
// An error wraps errProtocol: the frame is malformed.
func (pr *proc) answer(m *message) ([]byte, error) {
	if m.ID == 0 || m.Call == 0 || m.Name == "" {
		return nil, fmt.Errorf("%w: call frame without run id, call id or name", errProtocol)
	}
	p := pr.pool
	p.mu.Lock()
	r := pr.runs[m.ID]
	p.mu.Unlock()
	if r == nil {
		// The run is over here; the worker's side ends too.
		return encodeFrame(&message{Type: msgReply, ID: m.ID, Call: m.Call, Error: &v8sandbox.HostError{Message: "the run is over"}})
	}
	args := m.Args
	if len(args) == 0 {
		args = []byte("[]")
	}
	reply := v8sandbox.Dispatch(r.hostCtx, r.host, v8sandbox.HostCall{Name: m.Name, Args: args})
	if stop := v8sandbox.StopReason(r.hostCtx, false, r.timeout); stop != nil {
		// The run ended (deadline or cancellation) while the host worked:
		// the run ends with that reason, not with whatever the host made
		// of its cancelled context.
		reply = v8sandbox.HostReply{Fatal: stop}
	}
	frame, err := encodeReply(m.ID, m.Call, reply)
	if err != nil {
		return encodeFrame(&message{Type: msgReply, ID: m.ID, Call: m.Call,
			Error: &v8sandbox.HostError{Message: fmt.Sprintf("result of host function %q cannot be sent to the sandbox: %v", m.Name, err)}})
	}
	return frame, nil
}

func isClosed(ch chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// kill SIGKILLs the worker, recording why (the first reason wins).
func (pr *proc) kill(reason killReason, detail string) {
	p := pr.pool
	p.mu.Lock()
	if pr.dead {
		p.mu.Unlock()
		return
	}
	first := pr.reason == killNone
	if first {
		// From now on the process gets no new run (acquire skips it) and
		// its slot starts a replacement at once.
		pr.reason, pr.detail = reason, detail
		p.broadcastLocked()
	}
	p.mu.Unlock()
	if first {
		pr.release()
	}
	if first && reason != killShutdown {
		p.killed.Add(1)
		p.logger.Warn("killing sandbox worker", "pid", pr.pid, "reason", detail)
	}
	_ = pr.cmd.Process.Kill()
}

// shutdown closes the worker's stdin, which makes it exit, and kills it if
// it does not within a grace period. It returns once the worker is gone.
func (pr *proc) shutdown() {
	p := pr.pool
	p.mu.Lock()
	pr.stopping = true
	p.mu.Unlock()
	pr.closeStdin()
	t := time.NewTimer(2 * p.opts.Grace)
	defer t.Stop()
	select {
	case <-pr.exited:
		return
	case <-t.C:
	}
	pr.kill(killShutdown, "did not exit after its stdin was closed")
	<-pr.exited
}

func (pr *proc) release() { pr.releaseOnce.Do(func() { close(pr.released) }) }

// reap waits for the process, types its death and fails its runs.
func (pr *proc) reap() {
	p := pr.pool
	select {
	case <-pr.stderrDone:
	case <-time.After(2 * time.Second):
	}
	// A worker that closed its stdout but lives on is broken: kill it.
	waited := make(chan struct{})
	go func() {
		t := time.NewTimer(p.opts.Grace)
		defer t.Stop()
		select {
		case <-t.C:
			pr.kill(killProtocol, "closed its output without exiting")
		case <-waited:
		}
	}()
	_ = pr.cmd.Wait()
	close(waited)
	pr.closeStdin()
	<-pr.cgroupDone
	if pr.cgroup != "" {
		if err := removeCgroup(pr.cgroup); err != nil {
			p.logger.Warn("sandbox worker: its pids cgroup is left behind", "pid", pr.pid, "err", err)
		}
	}
	state := pr.cmd.ProcessState

	pr.errMu.Lock()
	oomLine, fatalLine, suppressed := pr.oomLine, pr.fatalLine, pr.suppressed
	pr.errMu.Unlock()

	p.mu.Lock()
	deathErr := pr.classify(state, oomLine, fatalLine)
	pr.dead = true
	runs := pr.runs
	pr.runs = map[uint64]*pending{}
	p.inflight -= len(runs)
	delete(p.procs, pr)
	p.dropSpareLocked(pr)
	p.dropIdleLocked(pr)
	slot := pr.slot
	unexpected := pr.reason == killNone && !pr.stopping
	pr.idleCrash = unexpected && len(runs) == 0 && !pr.draining
	pr.deathErr = deathErr
	p.broadcastLocked()
	p.mu.Unlock()

	for _, r := range runs {
		r.done <- outcome{err: deathErr}
	}
	if unexpected {
		p.crashed.Add(1)
	}
	attrs := []any{"slot", slot, "pid", pr.pid, "state", state.String(), "runs", len(runs), "uptime", time.Since(pr.started).Round(time.Millisecond)}
	if suppressed > 0 {
		attrs = append(attrs, "stderr_lines_suppressed", suppressed)
	}
	switch {
	case unexpected || len(runs) > 0:
		p.logger.Warn("sandbox worker died", append(attrs, "code", deathErr.Code, "cause", deathErr.Message)...)
	default:
		p.logger.Debug("sandbox worker exited", attrs...)
	}
	pr.release()
	close(pr.exited)
}

// classify types the death of the worker; called with pool.mu held.
func (pr *proc) classify(state *os.ProcessState, oomLine, fatalLine string) *v8sandbox.Error {
	sigkill := false
	if ws, ok := state.Sys().(syscall.WaitStatus); ok {
		sigkill = ws.Signaled() && ws.Signal() == syscall.SIGKILL
	}
	if sigkill && pr.reason != killNone {
		switch pr.reason {
		case killRSS:
			return v8sandbox.Errorf(v8sandbox.CodeHeapLimit, "the sandbox worker process ran out of memory (%s)", pr.detail)
		case killDeadline:
			return v8sandbox.Errorf(v8sandbox.CodeSandboxCrashed, "the sandbox worker process was killed because another run on it ignored its deadline")
		case killCancel:
			return v8sandbox.Errorf(v8sandbox.CodeSandboxCrashed, "the sandbox worker process was killed because a cancelled run on it did not stop")
		case killProtocol:
			return v8sandbox.Errorf(v8sandbox.CodeSandboxCrashed, "the sandbox worker process was killed: %s", pr.detail)
		default:
			return v8sandbox.Errorf(v8sandbox.CodeSandboxCrashed, "the sandbox worker process was stopped: %s", pr.detail)
		}
	}
	if oomLine != "" {
		return v8sandbox.Errorf(v8sandbox.CodeHeapLimit, "the sandbox worker process ran out of memory (%s)", oomLine)
	}
	if sigkill && pr.oomOK {
		if n, ok := oomKills(); ok && n > pr.oomBase {
			return v8sandbox.Errorf(v8sandbox.CodeHeapLimit, "the sandbox worker process was killed by the kernel's out-of-memory killer")
		}
	}
	detail := state.String()
	if fatalLine != "" {
		detail += ": " + fatalLine
	}
	return v8sandbox.Errorf(v8sandbox.CodeSandboxCrashed, "the sandbox worker process died (%s)", detail)
}

// stderrLoop forwards the worker's stderr to the logger (bounded) and
// remembers the lines that explain a death.
func (pr *proc) stderrLoop(r io.Reader) {
	defer close(pr.stderrDone)
	br := bufio.NewReaderSize(r, stderrReadBytes)
	for {
		line, err := br.ReadSlice('\n')
		if len(line) > 0 {
			pr.stderrLine(string(bytes.TrimRight(line, "\r\n")))
		}
		if err != nil && !errors.Is(err, bufio.ErrBufferFull) {
			return
		}
	}
}

// oomMarkers are the stderr texts of a process dying of memory exhaustion:
// V8's fatal OOM and size errors (which V8 raises instead of an exception
// for some builtins), C++ bad_alloc and Go's runtime OOM.
var oomMarkers = []string{
	"out of memory", // "Fatal JavaScript out of memory", "Fatal process out of memory", Go's "runtime: out of memory"
	"reached heap limit",
	"invalid size error", // 'x'.repeat(2**27).split('')
	"invalid table size",
	"invalid array length allocation failed",
	"bad_alloc",
	"cannot allocate memory",
}

// fatalMarkers start the line that best explains another crash.
var fatalMarkers = []string{"Fatal ", "Check failed", "fatal error:", "panic:", "SIG", "runtime:"}

func (pr *proc) stderrLine(line string) {
	text := strings.TrimSpace(strings.TrimLeft(line, "# "))
	if text == "" {
		return
	}
	short := textcut.Clip(text, 200, "…")
	lower := strings.ToLower(text)
	pr.errMu.Lock()
	defer pr.errMu.Unlock()
	if pr.oomLine == "" {
		for _, m := range oomMarkers {
			if strings.Contains(lower, m) {
				pr.oomLine = short
				break
			}
		}
	}
	if pr.fatalLine == "" && !strings.HasPrefix(text, "Fatal error in") {
		for _, m := range fatalMarkers {
			if strings.HasPrefix(text, m) {
				pr.fatalLine = short
				break
			}
		}
	}
	if pr.logged >= maxLoggedLines {
		pr.suppressed++
		return
	}
	pr.logged++
	pr.pool.logger.Warn("sandbox worker stderr", "pid", pr.pid, "line", textcut.Clip(line, maxLoggedLineB, "…"))
}
