package procpool

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// Call lanes: the fast path of a host call.
//
// On the shared protocol pipe a host call's reply is read by the worker's
// frame loop and handed to the thread that waits for it, and the call is
// read by the parent's frame loop and handed to a goroutine of its own:
// every hop wakes a goroutine on another thread, and Go's scheduler wakes
// spare threads to look for work on each one (profiles showed ~13 context
// switches per call, where the floor is four). A lane is a pair of pipes
// owned by one call at a time: the worker's thread making the call writes
// it and then blocks in read(2) on the lane until the reply arrives, so the
// kernel wakes exactly that thread; the parent's lane loop reads the call,
// serves it inline and writes the reply. Only read and write on
// descriptors the worker inherited: nothing the seccomp allowlist does not
// have already.
//
// Lanes carry the same frames as the pipe (call, then reply), strictly one
// call at a time. A worker with no free lane (more calls in flight than
// lanes) sends the call on the pipe as before.

// lanesArg is the worker argument that gives the number of lanes; lane i's
// reply pipe (read end) is fd 3+2i and its call pipe (write end) 4+2i.
const lanesArg = "lanes="

// maxLanes bounds the lanes of one worker (ISOGATE_MAX_LANES in
// confine_linux.h: the descriptors below it survive the early sweep).
const maxLanes = 16

// lanesFor returns how many lanes a worker with slots V8 threads gets:
// two per thread (a sync call plus an async one in flight), at most
// maxLanes.
func lanesFor(slots int) int { return min(2*max(slots, 1), maxLanes) }

// workerLaneCount is the lane count this process was started with, 0 when
// none (or the argument is malformed).
func workerLaneCount() int {
	for _, a := range os.Args[1:] {
		if v, ok := strings.CutPrefix(a, lanesArg); ok {
			if n, err := strconv.Atoi(v); err == nil && n > 0 && n <= maxLanes {
				return n
			}
		}
	}
	return 0
}

// workerLanes opens the lanes this worker inherited. It must run before
// the seccomp filter is installed (see [watchLane]).
func workerLanes() []*lane {
	n := workerLaneCount()
	lanes := make([]*lane, n)
	pace := new(replyPace)
	for i := range lanes {
		lanes[i] = openLane(3+2*i, 4+2*i, pace)
	}
	return lanes
}

// openLane is the lane with reply pipe in and call pipe out. The call pipe
// stays blocking (os/exec hands ExtraFiles over in blocking mode, and the
// pipe is empty when a call is written); the reply pipe is watched, for
// polling, when it can be, else read blocking.
func openLane(in, out int, pace *replyPace) *lane {
	l := &lane{in: in, out: out, ep: -1, pace: pace}
	if ep, ok := watchLane(in); ok {
		l.ep = ep
	}
	return l
}

// lane is the worker's end of one lane: in is the reply pipe's read end,
// out the call pipe's write end. A lane is used by one call at a time.
type lane struct {
	in, out int
	// ep is an epoll instance watching in (then non-blocking), -1 when in
	// is a blocking descriptor.
	ep   int
	pace *replyPace // shared by the worker's lanes
	buf  []byte     // read buffer, kept between calls
}

// Waiting for a reply: poll, then sleep.
//
// Waking a thread that sleeps in the kernel costs ~15 µs per wake-up on
// the machines measured (a virtual CPU halted and woken by an interrupt),
// more than the parent takes to answer a call it serves itself. So a
// thread waiting for a reply first polls the pipe (a non-blocking read,
// yielding the CPU between tries to any other runnable thread) for up to
// laneSpin, then sleeps in epoll_pwait. It polls only while replies have
// been arriving within laneSpin: calls that go out to a slow backend cost
// no polling.
const laneSpin = 50 * time.Microsecond

// replyPace remembers whether the worker's last reply took longer than
// laneSpin.
type replyPace struct{ slow atomic.Bool }

// freeLanes are a worker's lanes not in use, the last one freed taken
// first: a program making one call after another keeps using the same lane,
// whose two ends are then polling for each other (see laneSpin).
type freeLanes struct {
	mu   sync.Mutex
	free []*lane
}

// take returns a free lane, or nil when all are in use.
func (f *freeLanes) take() *lane {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.free) == 0 {
		return nil
	}
	l := f.free[len(f.free)-1]
	f.free = f.free[:len(f.free)-1]
	return l
}

// put returns a lane taken from f.
func (f *freeLanes) put(l *lane) {
	f.mu.Lock()
	f.free = append(f.free, l)
	f.mu.Unlock()
}

// errLaneClosed means the parent closed the lane (it is shutting the worker
// down, or gone).
var errLaneClosed = errors.New("call lane closed by the parent")

// call writes frame, a call frame with call id id, and blocks until its
// reply arrives. An error means the lane is unusable from now on.
func (l *lane) call(frame []byte, id uint64) (*message, error) {
	if err := writeAll(l.out, frame); err != nil {
		return nil, err
	}
	return l.receive(id)
}

// receive blocks until the reply to call id arrives on the lane.
func (l *lane) receive(id uint64) (*message, error) {
	body, err := l.readFrame()
	if err != nil {
		return nil, err
	}
	m := decodeValueReply(body)
	if m != nil && len(m.Value) > 0 && len(l.buf) > 0 && &body[0] == &l.buf[4] {
		// The value points into the lane's buffer, which the next call on
		// this lane overwrites, perhaps before V8 has read it.
		m.Value = bytes.Clone(m.Value)
	}
	if m == nil {
		m = new(message)
		if err := json.Unmarshal(body, m); err != nil {
			return nil, fmt.Errorf("%w: lane frame is not a JSON message: %v", errProtocol, err)
		}
	}
	if m.Type != msgReply || m.Call != id {
		return nil, fmt.Errorf("%w: lane answered call %d with a %q frame for call %d", errProtocol, id, m.Type, m.Call)
	}
	return m, nil
}

// laneReadSize is the first read of a reply: the header and a small body
// arrive in one read(2).
const laneReadSize = 16 << 10

// readFrame reads one frame's body: in the lane's buffer when it fits
// (valid until the next call on the lane), else in a buffer of its own.
func (l *lane) readFrame() ([]byte, error) {
	if cap(l.buf) < laneReadSize {
		l.buf = make([]byte, laneReadSize)
	}
	buf := l.buf[:cap(l.buf)]
	n, err := l.readAtLeast(buf, 4, time.Now())
	if err != nil {
		return nil, err
	}
	size := int(binary.BigEndian.Uint32(buf))
	if size == 0 || size > MaxFrameBytes {
		return nil, fmt.Errorf("%w: lane frame of %d bytes", errProtocol, size)
	}
	if 4+size > len(buf) {
		grown := make([]byte, 4+size)
		copy(grown, buf[:n])
		buf = grown // not kept: a big value is handed over without a copy
	}
	if n > 4+size {
		return nil, fmt.Errorf("%w: lane carried more than one frame", errProtocol)
	}
	if _, err := l.readAtLeast(buf[n:4+size], 4+size-n, time.Time{}); err != nil {
		return nil, err
	}
	return buf[4 : 4+size], nil
}

// readAtLeast reads from the lane's reply pipe into buf until at least min
// bytes arrived. asked is when the reply was awaited (zero when this
// continues a reply): the wait for its first bytes sets the pace.
//
// While the pipe is empty it is polled, yielding the CPU between tries,
// until pollUntil (zero, no polling, when continuing a reply or when the
// last reply was slow), then the thread sleeps until it is readable.
func (l *lane) readAtLeast(buf []byte, min int, asked time.Time) (int, error) {
	var pollUntil time.Time
	if !asked.IsZero() && !l.pace.slow.Load() {
		pollUntil = asked.Add(laneSpin)
	}
	n := 0
	for n < min {
		k, err := l.read(buf[n:])
		switch {
		case err == syscall.EINTR:
			continue
		case err == syscall.EAGAIN && time.Now().Before(pollUntil):
			yieldCPU()
			continue
		case err == syscall.EAGAIN:
			if err := sleepUntilReadable(l.ep); err != nil {
				return n, fmt.Errorf("waiting on a call lane: %w", err)
			}
			continue
		case err != nil:
			return n, fmt.Errorf("reading a call lane: %w", err)
		case k == 0:
			return n, errLaneClosed
		}
		if n == 0 && !asked.IsZero() {
			l.pace.slow.Store(time.Since(asked) > laneSpin)
		}
		n += k
	}
	return n, nil
}

// read makes one read of the reply pipe: one that cannot block when the
// pipe is watched (non-blocking), see readNow.
func (l *lane) read(b []byte) (int, error) {
	if l.ep < 0 {
		return syscall.Read(l.in, b)
	}
	return readNow(l.in, b)
}

func writeAll(fd int, b []byte) error {
	for len(b) > 0 {
		k, err := syscall.Write(fd, b)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return fmt.Errorf("writing a call lane: %w", err)
		}
		b = b[k:]
	}
	return nil
}

// parentLane is the parent's end of one lane: calls reads the call pipe,
// replies is the reply pipe's write end.
type parentLane struct {
	calls   *callReader
	replies *os.File
}

// newLanes creates n lanes and returns the parent's ends and the
// descriptors to pass to the worker, in fd order (ExtraFiles).
func newLanes(n int) (lanes []*parentLane, child []*os.File, err error) {
	closeAll := func() {
		closeParentLanes(lanes)
		for _, f := range child {
			f.Close()
		}
	}
	for range n {
		replyR, replyW, err := os.Pipe()
		if err != nil {
			closeAll()
			return nil, nil, err
		}
		calls, callW, err := newCallPipe()
		if err != nil {
			replyR.Close()
			replyW.Close()
			closeAll()
			return nil, nil, err
		}
		lanes = append(lanes, &parentLane{calls: calls, replies: replyW})
		child = append(child, replyR, callW)
	}
	return lanes, child, nil
}

// newCallPipe makes a lane's call pipe: the parent's read end, outside
// Go's poller, and the worker's write end (blocking, as a worker expects).
//
// The read end stays out of Go's poller because the parent polls it after
// each reply (see callReader): Go's poller watches every descriptor it
// holds edge-triggered, and a call landing on the pipe would wake the
// thread that sleeps in the poller for nothing, once per call, taking the
// CPU from the worker on a 2-core machine (profiles showed about one
// context switch per call in the parent for that alone).
func newCallPipe() (*callReader, *os.File, error) {
	var fds [2]int
	if err := syscall.Pipe2(fds[:], syscall.O_CLOEXEC); err != nil {
		return nil, nil, fmt.Errorf("call lane pipe: %w", err)
	}
	r := &callReader{fd: fds[0], ep: -1}
	if ep, ok := watchLane(fds[0]); ok {
		r.ep = ep
	}
	return r, os.NewFile(uintptr(fds[1]), "lane-call"), nil
}

// laneLoop serves the calls of one lane until the worker closes it (or
// dies): each call is read, served inline (the worker's thread is blocked
// waiting anyway) and answered on the lane.
func (pr *proc) laneLoop(l *parentLane) {
	defer l.calls.close()
	fr := newFrameReader(l.calls)
	for {
		m, err := fr.read()
		if err == nil && (m.Type != msgCall || !isClosed(pr.readyCh)) {
			err = fmt.Errorf("%w: unexpected %q frame on a call lane", errProtocol, m.Type)
		}
		var frame []byte
		if err == nil {
			pr.laneCalls.Add(1)
			frame, err = pr.answer(m)
		}
		if err != nil {
			if errors.Is(err, errProtocol) {
				pr.kill(killProtocol, err.Error())
			}
			return
		}
		// The reply pipe is empty (one call at a time): a frame that fits
		// in the pipe's buffer never blocks; a bigger one gets a deadline,
		// as on the protocol pipe.
		if len(frame) > 64<<10 {
			_ = l.replies.SetWriteDeadline(time.Now().Add(writeTimeout))
		}
		if _, err := l.replies.Write(frame); err != nil {
			if errors.Is(err, os.ErrDeadlineExceeded) {
				pr.kill(killProtocol, "stopped reading its call lane")
			}
			return
		}
		l.calls.answered = time.Now()
	}
}

// callReader reads a parent lane's call pipe. A program that makes one
// call after another sends its next call a few µs after the reply: less
// than it costs to wake a sleeping thread. So after a reply the reader
// polls the pipe for the next call (a non-blocking read, yielding to other
// goroutines between tries) for up to laneSpin, as long as calls have
// been following replies within that time, and otherwise sleeps in
// epoll_pwait on an epoll instance of the lane's own (a thread per
// sleeping lane, the price of keeping the pipe out of Go's poller: see
// newCallPipe). Where there is no epoll, the pipe stays blocking and the
// reader sleeps in read(2).
type callReader struct {
	fd int
	// ep is an epoll instance watching fd (then non-blocking), -1 when fd
	// is blocking.
	ep int
	// answered is when the last reply was written (zero once the next
	// call has begun to arrive).
	answered time.Time
	// slow is set when the last call came later than laneSpin after the
	// reply before it.
	slow bool
}

func (r *callReader) Read(p []byte) (int, error) {
	var pollUntil time.Time
	if !r.answered.IsZero() && !r.slow {
		pollUntil = r.answered.Add(laneSpin)
	}
	for {
		var n int
		var err error
		if r.ep < 0 {
			n, err = syscall.Read(r.fd, p)
		} else {
			n, err = readNow(r.fd, p)
		}
		switch {
		case err == syscall.EINTR:
			continue
		case err == syscall.EAGAIN && time.Now().Before(pollUntil):
			runtime.Gosched()
			continue
		case err == syscall.EAGAIN:
			if err := sleepUntilReadable(r.ep); err != nil {
				return 0, fmt.Errorf("waiting on a call lane: %w", err)
			}
			continue
		case err != nil:
			return 0, fmt.Errorf("reading a call lane: %w", err)
		case n == 0 && len(p) > 0:
			return 0, io.EOF
		}
		if !r.answered.IsZero() {
			r.slow = time.Since(r.answered) > laneSpin
			r.answered = time.Time{}
		}
		return n, nil
	}
}

// close closes the pipe and its epoll instance.
func (r *callReader) close() {
	syscall.Close(r.fd)
	if r.ep >= 0 {
		syscall.Close(r.ep)
	}
}

// closeParentLanes closes the parent's ends of lanes never handed to a
// lane loop.
func closeParentLanes(lanes []*parentLane) {
	for _, l := range lanes {
		l.calls.close()
		l.replies.Close()
	}
}
