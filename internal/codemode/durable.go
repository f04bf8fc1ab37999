package codemode

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/isogate/isogate/internal/backend"
	"slices"
	"sync"

	"github.com/isogate/isogate/v8sandbox"
)

// Durable runs (sandbox.durable). A program is deterministic given what it
// observed: its source and inputs, each host call's result, the values of
// Date.now() and the seed of Math.random(). A durable run journals these as
// it goes; re-executing the program in a fresh context and answering its
// calls from the journal brings it back to where it was, without repeating
// a side effect, and it continues live past the journal's end. A call is
// journalled as started before it is sent: one started without a result
// (its replica died mid-call) is never re-sent blindly.
//
// Concurrent calls make the order in which their replies reach the
// program an observation too (Promise.race, any, allSettled): each call
// journals the calls whose replies the program received since its
// previous call, in order, and a replay delivers the journalled replies in
// that order, one per turn of the event loop as they came (bridge.js).
// Time advances only at host calls: in a durable run Date.now() returns
// one value between two events (a call made, a reply delivered), and only
// that value is journalled, so a journal grows with the calls, never with
// the clock reads. A busy wait on the clock therefore never ends.

// Durability says which runs are journalled (sandbox.durable).
type Durability string

// The durability modes.
const (
	// DurableOff journals nothing: a paused run lives only in its
	// replica's memory.
	DurableOff Durability = "off"
	// DurablePaused journals every run in memory and writes the journal
	// to the store when the run pauses (an approval or an input request).
	DurablePaused Durability = "paused"
	// DurableAll also writes the journal through to the store as the run
	// goes, after every call.
	DurableAll Durability = "all"
)

// The codes a resumed run can end with.
const (
	// CodeReplayDiverged: the re-executed program departed from its
	// journal: it asked for another call than the journal's next one, made
	// it after other replies than the journal lists before it, did not make
	// it once those were delivered, or ended before making it; or the
	// journal lists an order no run can have. Nothing was repeated.
	CodeReplayDiverged v8sandbox.Code = "REPLAY_DIVERGED"
	// CodeCallIndeterminate: the journal has a call that was started and
	// has no result (its replica died while it was in flight), of a tool
	// that does not declare itself idempotent: it may or may not have
	// happened, and is not sent again.
	CodeCallIndeterminate v8sandbox.Code = "CALL_INDETERMINATE"
)

// Call states in a journal.
const (
	callStarted = "started" // sent (or about to be): its outcome is unknown
	callAsking  = "asking"  // paused for an approval: not sent yet
	callDone    = "done"
)

// Journal is what a durable run observed, enough to re-execute it.
type Journal struct {
	// The run's source and inputs.
	Code          string `json:"code"`
	TimeoutMS     int64  `json:"timeout_ms,omitempty"`
	MaxOutputSize int    `json:"max_output_size,omitempty"`
	Intent        string `json:"intent,omitempty"`
	// Seed seeds the run's Math.random().
	Seed [4]uint32 `json:"seed"`
	// Clock are the values Date.now() (and new Date()) returned, in order.
	Clock []float64 `json:"clock,omitempty"`
	// Calls are the host calls in the order the program made them.
	Calls []JournalCall `json:"calls"`
	// Answers are the approvals given to the run, in order.
	Answers []JournalAnswer `json:"answers,omitempty"`
	// Replays counts how many times the run was resumed by replay.
	Replays int `json:"replays,omitempty"`
	// loaded: read back from the store ([ParseJournal]), not started here.
	loaded bool
}

// JournalCall is one host call of a journal.
type JournalCall struct {
	Seq     int                  `json:"seq"` // the program's call number, from 1
	Backend string               `json:"backend"`
	Tool    string               `json:"tool"`
	Args    json.RawMessage      `json:"args"`
	State   string               `json:"state"`
	Reply   *v8sandbox.HostReply `json:"reply,omitempty"` // State done
	// After are the calls (seqs) whose replies the program received
	// since its previous call and before this one, in the order received.
	After []int `json:"after,omitempty"`
}

// JournalAnswer is an approval answer the run received.
type JournalAnswer struct {
	Seq      int  `json:"seq"`
	Approved bool `json:"approved"`
}

// NewJournal starts the journal of a run of code with its inputs and a
// fresh random seed.
func NewJournal(code string, timeoutMS int64, maxOutputSize int, intent string) *Journal {
	var b [16]byte
	_, _ = rand.Read(b[:])
	j := &Journal{Code: code, TimeoutMS: timeoutMS, MaxOutputSize: maxOutputSize, Intent: intent, Calls: []JournalCall{}}
	for i := range j.Seed {
		j.Seed[i] = binary.LittleEndian.Uint32(b[4*i:])
	}
	return j
}

// JournalSink appends a durable run's new journal entries to the store, in
// order (see [DurableRun.Flush]); with DurableAll it receives them after
// each change (write-through). It receives nil once when the run stops
// being durable (a bound passed): the journal it kept is stale from then
// on. An error wrapping [ErrHalt] stops the run before its next call.
type JournalSink func(ctx context.Context, entries [][]byte) error

// errNotDurable: the run does not journal any more.
var errNotDurable = errors.New("the run is not durable any more")

// ErrHalt, wrapped in a [JournalSink]'s error, means the run must not send
// another call (another replica took it over, or its journal could
// neither be written nor dropped): the call being journalled is not sent,
// whatever the context of the run says.
var ErrHalt = errors.New("durable run halted")

// DurableLimits bound one run's journal: past either, the run stops
// journalling and is not durable any more (its record says so).
type DurableLimits struct {
	MaxCalls int
	MaxBytes int
}

// DurableRun is the journal of one run as it goes: the part replayed from
// an earlier execution, then what the live part adds. It is safe for
// concurrent use (the program's calls run concurrently).
type DurableRun struct {
	wmu     sync.Mutex // one Flush at a time: entries reach the store in order
	mu      sync.Mutex
	j       *Journal
	log     [][]byte     // the entries not written to the store yet
	replay  int          // the last journalled call number: calls up to it are answered from the journal
	initial int          // the calls journalled at the start
	clock   int          // journalled clock values to replay
	broken  string       // why the journal's delivery order cannot be replayed ("": it can)
	bySeq   map[int]int  // seq → index in j.Calls
	used    map[int]bool // replayed seqs the program asked for
	bytes   int
	limits  DurableLimits
	off     string // why the run is not durable any more ("": it is)
	sink    JournalSink
	toldOff bool  // the sink heard the run is not durable any more
	halt    error // the sink's ErrHalt: no call is sent any more
	replays int
	// replayLatency, set by tests only, is called before a call answered
	// from the journal returns: the latency of a replayed call, which the
	// tests choose to release replies in an order of their choosing.
	replayLatency func(seq int)
}

// NewDurableRun returns the durable state of a run journalled in j (new,
// or loaded to resume the run by replay). sink, when set, receives the
// journal after each change (write-through).
func NewDurableRun(j *Journal, limits DurableLimits, sink JournalSink) *DurableRun {
	d := &DurableRun{j: j, initial: len(j.Calls), clock: len(j.Clock), bySeq: map[int]int{}, used: map[int]bool{},
		limits: limits, sink: sink}
	for i, c := range j.Calls {
		d.bySeq[c.Seq] = i
		d.replay = max(d.replay, c.Seq)
		d.bytes += len(c.Args) + replySize(c.Reply) + 8*len(c.After) + 64
	}
	d.broken = d.checkOrder()
	switch {
	case !j.loaded:
		d.logLocked(beginEntry(j))
	case d.initial > 0:
		d.addLocked(&journalEntry{K: entryReplay})
	}
	return d
}

// checkOrder says why the journal's delivery order is one no run can have
// ("": it is not): a reply received before its call was made, twice, or
// without a journalled outcome.
func (d *DurableRun) checkOrder() string {
	received := map[int]bool{}
	for seq := 1; seq <= d.replay; seq++ {
		i, ok := d.bySeq[seq]
		if !ok {
			continue
		}
		for _, s := range d.j.Calls[i].After {
			k, known := d.bySeq[s]
			switch {
			case s <= 0 || s >= seq:
				return fmt.Sprintf("it lists the reply of call #%d as received before call #%d was made", s, max(s, seq))
			case received[s]:
				return fmt.Sprintf("it lists the reply of call #%d as received twice", s)
			case !known || d.j.Calls[k].State != callDone:
				return fmt.Sprintf("it lists the reply of call #%d as received, and holds no outcome of that call", s)
			}
			received[s] = true
		}
	}
	return ""
}

// addLocked makes the change of entry e to the journal and logs it.
func (d *DurableRun) addLocked(e *journalEntry) {
	_ = apply(d.j, d.bySeq, e) // the kinds this file writes all apply
	d.logLocked(e)
}

// logLocked keeps entry e for the next Flush.
func (d *DurableRun) logLocked(e *journalEntry) {
	b, _ := json.Marshal(e)
	d.log = append(d.log, b)
}

// Flush hands the entries not written yet to write (possibly none), in
// the order they were made, one Flush at a time; if write fails they are
// kept for the next one. It fails with the write's error, or when the run
// is not durable any more.
func (d *DurableRun) Flush(ctx context.Context, write JournalSink) error {
	d.wmu.Lock()
	defer d.wmu.Unlock()
	d.mu.Lock()
	if d.off != "" {
		d.mu.Unlock()
		return errNotDurable
	}
	entries := d.log
	d.log = nil
	d.mu.Unlock()
	if entries == nil {
		entries = [][]byte{}
	}
	if err := write(ctx, entries); err != nil {
		d.mu.Lock()
		if d.off == "" {
			d.log = append(entries, d.log...)
		}
		d.mu.Unlock()
		return err
	}
	return nil
}

// Durable reports whether the run is still journalled, and why not.
func (d *DurableRun) Durable() (bool, string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.off == "", d.off
}

// Replayed is the number of calls answered from the journal at the start.
func (d *DurableRun) Replayed() int { return d.initial }

// Inputs returns the source and inputs the journal was started with.
func (d *DurableRun) Inputs() Journal {
	d.mu.Lock()
	defer d.mu.Unlock()
	return Journal{Code: d.j.Code, TimeoutMS: d.j.TimeoutMS, MaxOutputSize: d.j.MaxOutputSize, Intent: d.j.Intent}
}

// determinism is what the prelude's Date, Math.random and delivery of
// replies start from: the seed, the clock values to replay, and the
// journal's events in order (order: s > 0 the reply of call s was
// delivered, -n call n was made).
func (d *DurableRun) determinism() json.RawMessage {
	d.mu.Lock()
	defer d.mu.Unlock()
	order := []int{}
	for seq := 1; seq <= d.replay && d.off == ""; seq++ {
		if i, ok := d.bySeq[seq]; ok {
			order = append(append(order, d.j.Calls[i].After...), -seq)
		}
	}
	clock := []float64{}
	if d.off == "" {
		clock = append(clock, d.j.Clock[:d.clock]...)
	}
	return mustMarshal(struct {
		Seed  [4]uint32 `json:"seed"`
		Clock []float64 `json:"clock"`
		Order []int     `json:"order"`
	}{d.j.Seed, clock, order})
}

// fresh reports whether the run replays nothing, no call and no clock
// value: its start (determinism) is then the journal's seed alone.
func (d *DurableRun) fresh() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.replay == 0 && d.clock == 0
}

// diverged is the error of a replay whose program did not make call seq,
// the journal's next event, once every reply the journal lists before it
// was delivered (bridge.js saw it).
func (d *DurableRun) diverged(seq int) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	what, after := fmt.Sprintf("#%d", seq), "none"
	if i, ok := d.bySeq[seq]; ok {
		c := d.j.Calls[i]
		what, after = fmt.Sprintf("#%d (%s.%s)", seq, c.Backend, c.Tool), seqList(c.After)
	}
	return v8sandbox.Errorf(CodeReplayDiverged,
		"replay diverged: the journal has call %s next, made after the replies of calls %s, and the program did not make it once those were delivered; nothing was repeated",
		what, after)
}

// seqList renders call numbers as #1, #3.
func seqList(seqs []int) string {
	var b bytes.Buffer
	for i, s := range seqs {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "#%d", s)
	}
	if b.Len() == 0 {
		return "none"
	}
	return b.String()
}

// noteClock journals the live Date.now() values the program observed
// before a call.
func (d *DurableRun) noteClock(values []float64) {
	if len(values) == 0 {
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.off != "" {
		return
	}
	d.addLocked(&journalEntry{K: entryClock, Clock: values})
	d.bytes += 20 * len(values)
	d.checkLocked()
}

func (d *DurableRun) checkLocked() {
	switch {
	case d.limits.MaxCalls > 0 && len(d.j.Calls) > d.limits.MaxCalls:
		d.stopLocked(fmt.Sprintf("its journal passed %d calls (sandbox.durable_max_calls)", d.limits.MaxCalls))
	case d.limits.MaxBytes > 0 && d.bytes > d.limits.MaxBytes:
		d.stopLocked(fmt.Sprintf("its journal passed %d bytes (sandbox.durable_max_bytes)", d.limits.MaxBytes))
	}
}

// stopLocked makes the run non-durable and frees its journal.
func (d *DurableRun) stopLocked(why string) {
	if d.off == "" {
		d.off = why
		d.j.Calls, d.j.Clock, d.bySeq, d.log = nil, nil, nil, nil
	}
}

// Stop makes the run non-durable (the store refused its journal).
func (d *DurableRun) Stop(why string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.stopLocked(why)
}

func replySize(r *v8sandbox.HostReply) int {
	if r == nil {
		return 0
	}
	n := len(r.Value)
	if r.Error != nil {
		n += len(r.Error.Message) + len(r.Error.Data)
	}
	if r.Fatal != nil {
		n += len(r.Fatal.Message)
	}
	return n
}

// replayed answers call seq from the journal when it is a journalled one:
// ok reports that it was, and reply is its journalled outcome; live, that
// it must be made live (an approval it paused for, or an idempotent call
// whose outcome is unknown). A call unlike the journal's, or one whose
// outcome is unknown, ends the run (a fatal error naming it).
func (d *DurableRun) replayed(seq int, backend, tool string, args json.RawMessage, after []int, idempotent bool) (reply *v8sandbox.HostReply, live bool, err error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if seq > d.replay {
		return nil, true, nil
	}
	if d.broken != "" {
		return nil, false, v8sandbox.Errorf(CodeReplayDiverged,
			"replay diverged: the run's journal cannot be replayed: %s; nothing was repeated", d.broken)
	}
	i, ok := d.bySeq[seq]
	if !ok {
		return nil, false, v8sandbox.Errorf(CodeReplayDiverged,
			"replay diverged: the program's call #%d (%s.%s) is not in the run's journal; nothing was repeated", seq, backend, tool)
	}
	c := d.j.Calls[i]
	if c.Backend != backend || c.Tool != tool || !bytes.Equal(c.Args, args) {
		return nil, false, v8sandbox.Errorf(CodeReplayDiverged,
			"replay diverged: the program's call #%d is %s.%s(%s) where the journal has %s.%s(%s); nothing was repeated",
			seq, backend, tool, clipArgs(args), c.Backend, c.Tool, clipArgs(c.Args))
	}
	if !slices.Equal(c.After, after) {
		return nil, false, v8sandbox.Errorf(CodeReplayDiverged,
			"replay diverged: the program made call #%d (%s.%s) after receiving the replies of calls %s, where the journal has %s; nothing was repeated",
			seq, backend, tool, seqList(after), seqList(c.After))
	}
	d.used[seq] = true
	switch {
	case c.State == callDone && c.Reply != nil:
		r := *c.Reply
		return &r, false, nil
	case c.State == callAsking || idempotent:
		return nil, true, nil // nothing was sent, or sending again is harmless
	}
	return nil, false, v8sandbox.Errorf(CodeCallIndeterminate,
		"call #%d, %s.%s, was in flight when the run's replica stopped: it may or may not have happened, and %s.%s does not declare itself idempotent (annotations.idempotentHint), so it is not sent again",
		seq, backend, tool, backend, tool)
}

// unused names the first journalled call the program did not ask for ("":
// none), once it has ended.
func (d *DurableRun) unused() string {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, c := range d.j.Calls[:min(d.initial, len(d.j.Calls))] {
		if !d.used[c.Seq] {
			return fmt.Sprintf("#%d (%s.%s)", c.Seq, c.Backend, c.Tool)
		}
	}
	return ""
}

func clipArgs(args json.RawMessage) string {
	if len(args) > 120 {
		return string(args[:120]) + "…"
	}
	return string(args)
}

// start journals call seq as started (before it is sent), made after the
// replies of the calls in after, or updates a replayed one that goes live.
func (d *DurableRun) start(ctx context.Context, seq int, backend, tool string, args json.RawMessage, after []int) {
	d.mu.Lock()
	if d.off != "" {
		d.mu.Unlock()
		return
	}
	_, known := d.bySeq[seq]
	d.addLocked(&journalEntry{K: entryStart, Seq: seq, Backend: backend, Tool: tool, Args: args, After: after})
	if !known {
		d.bytes += len(args) + 8*len(after) + 64
		d.checkLocked()
	}
	d.mu.Unlock()
	d.writeThrough(ctx)
}

// finish journals the outcome of call seq.
func (d *DurableRun) finish(ctx context.Context, seq int, reply v8sandbox.HostReply) {
	d.mu.Lock()
	if d.off != "" {
		d.mu.Unlock()
		return
	}
	if _, ok := d.bySeq[seq]; ok {
		reply.Checked = false
		d.addLocked(&journalEntry{K: entryDone, Seq: seq, Reply: &reply})
		d.bytes += replySize(&reply)
		d.checkLocked()
	}
	d.mu.Unlock()
	d.writeThrough(ctx)
}

// asking marks call seq as waiting for an approval: it has not been sent,
// so a resume may make it.
func (d *DurableRun) asking(seq int) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if _, ok := d.bySeq[seq]; ok && d.off == "" {
		d.addLocked(&journalEntry{K: entryAsking, Seq: seq})
	}
}

// answered journals an approval answer of call seq; the call is then
// started again (it is sent once approved).
func (d *DurableRun) answered(seq int, approved bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.off != "" {
		return
	}
	d.addLocked(&journalEntry{K: entryAnswer, Seq: seq, Approved: approved})
}

func (d *DurableRun) writeThrough(ctx context.Context) {
	if d.sink == nil {
		return
	}
	err := d.Flush(context.WithoutCancel(ctx), func(ctx context.Context, entries [][]byte) error {
		if len(entries) == 0 {
			return nil // another call's flush wrote them
		}
		return d.sink(ctx, entries)
	})
	if errors.Is(err, errNotDurable) {
		// Not durable any more: the sink hears it once (nil), so that the
		// store drops a journal that no longer says what the run did.
		d.mu.Lock()
		told := d.toldOff
		d.toldOff = true
		d.mu.Unlock()
		if !told {
			_ = d.sink(context.WithoutCancel(ctx), nil)
		}
		return
	}
	if err != nil {
		d.Stop("its journal could not be written: " + err.Error())
		d.mu.Lock()
		d.toldOff = true // the sink saw the failure
		if errors.Is(err, ErrHalt) {
			d.halt = err
		}
		d.mu.Unlock()
	}
}

// halted is the sink's ErrHalt, nil while the run may go on.
func (d *DurableRun) halted() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.halt
}

// journalCallKey carries the call a backend call belongs to through the
// Caller, so that an approver can mark it (see MarkAsking).
type journalCallKey struct{}

type journalCall struct {
	run *DurableRun
	seq int
}

// MarkAsking marks the durable call ctx belongs to as paused for an
// approval (not sent yet: a resume on another replica may make it) and
// returns the function that journals the answer; ok is false when ctx
// carries no durable call.
func MarkAsking(ctx context.Context) (answer func(approved bool), ok bool) {
	c, _ := ctx.Value(journalCallKey{}).(journalCall)
	if c.run == nil {
		return nil, false
	}
	c.run.asking(c.seq)
	return func(approved bool) { c.run.answered(c.seq, approved) }, true
}

// call makes call seq of a durable run: from the journal when it is a
// journalled one, live (journalled as started first, then its outcome)
// otherwise.
func (d *DurableRun) call(ctx context.Context, seq int, backend, tool string, args json.RawMessage, after []int, idempotent bool,
	live func(ctx context.Context) (json.RawMessage, error)) (json.RawMessage, error) {
	reply, goLive, err := d.replayed(seq, backend, tool, args, after, idempotent)
	if err != nil {
		return nil, err
	}
	if !goLive {
		if d.replayLatency != nil {
			d.replayLatency(seq)
		}
		return replyError(reply)
	}
	d.start(ctx, seq, backend, tool, args, after)
	if err := d.halted(); err != nil {
		return nil, err // the call is not sent: another replica has the run
	}
	if err := ctx.Err(); err != nil {
		// The run ended while its start was journalled (its journal was
		// taken over by another replica, for one): nothing is sent.
		return nil, err
	}
	value, err := live(context.WithValue(ctx, journalCallKey{}, journalCall{d, seq}))
	err = coded(err)
	// A call cut short by the run's end has no outcome, nor has one ended
	// by this replica's shutdown (its backends closed under it): a replica
	// that takes the run over finds it started and unanswered.
	if ctx.Err() == nil && v8sandbox.CodeOf(err) != codeBackendClosed {
		d.finish(ctx, seq, v8sandbox.Reply(value, err))
	}
	return value, err
}

// codeBackendClosed is the code of a call ended by this replica's
// shutdown (its backend manager closed).
const codeBackendClosed = backend.CodeClosed

// replyError turns a journalled reply back into the outcome of a call.
func replyError(r *v8sandbox.HostReply) (json.RawMessage, error) {
	switch {
	case r.Fatal != nil:
		return nil, r.Fatal
	case r.Error != nil:
		return nil, r.Error
	}
	return r.Value, nil
}

// describe is the run record's durability line.
func (d *DurableRun) describe() string {
	d.mu.Lock()
	defer d.mu.Unlock()
	switch {
	case d.off != "":
		return "not durable: " + d.off
	case d.initial > 0:
		return fmt.Sprintf("resumed by replay (%d calls from the journal)", d.initial)
	}
	return "journalled"
}
