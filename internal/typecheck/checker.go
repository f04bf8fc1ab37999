// Package typecheck checks code-mode programs with the TypeScript compiler
// before they run: the compiler's JavaScript build (npm `typescript`,
// embedded) runs in a resident V8 isolate of its own, warm between checks,
// and checks a program's text against the declarations of the tools it can
// reach. The program is never run by the checker, only parsed and
// type-checked, under a heap cap and a deadline of its own.
//
// A [Diagnostic] is either certain (an unknown tool, an unknown or missing
// parameter, a literal of the wrong type in a tool call: the call would
// fail) or a hint (anything else the compiler says, which valid dynamic
// code can trigger).
package typecheck

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/isogate/isogate/internal/fairshare"
	"github.com/isogate/isogate/v8sandbox"
)

// Defaults of [Options].
const (
	// DefaultTimeout bounds one check: past it the check is ended inside
	// the checker (ErrTimeout).
	DefaultTimeout = 2 * time.Second
	// DefaultHeapMB caps the checker's heap (the compiler and its
	// libraries take about 41 MB).
	DefaultHeapMB = 160
)

// Options configure a [Checker].
type Options struct {
	Timeout time.Duration // one check; DefaultTimeout when 0
	HeapMB  int           // the checker isolate's heap cap; DefaultHeapMB when 0
	// CacheDir keeps V8's code cache of the compiler (codecache.go), so
	// that a checker of a later process loads the compiler faster; ""
	// keeps none.
	CacheDir string
	// CodeCache, when set, keeps the code cache instead of CacheDir's
	// file (a checker worker's: its parent keeps the file).
	CodeCache v8sandbox.ResidentCodeCache
}

// Lanes is how many checks a checker serves at once, each in an isolate of
// its own (the first built at load, the others when first needed). Its
// lanes are shared between principals as the V8 slots are (fairshare): one
// principal holds at most one at a time, so that another's check never
// waits behind a principal's slow ones (a type bomb runs to its budget,
// and its lane is then rebuilt before its principal may use it again).
const Lanes = 2

// forgetTimeout bounds the call that drops a lane's bases (it only drops
// references).
const forgetTimeout = 5 * time.Second

// MaxQueued bounds the checks a principal holding its lane may have
// waiting for the next: past it a check fails at once (ErrUnavailable).
const MaxQueued = 4

// NewLaneShare returns the fair share of a checker's Lanes between
// principals (checkworker.Checker keeps one in front of its worker too).
func NewLaneShare() *fairshare.Slots {
	return fairshare.New(fairshare.Options{Capacity: Lanes, Share: 1, MaxWaiting: MaxQueued})
}

// Checker checks programs. It is safe for concurrent use; checks are served
// Lanes at a time, each by an isolate of its own, shared fairly between
// principals.
type Checker struct {
	opts      Options
	res       *v8sandbox.Resident   // lanes[0]: the one loaded at start, the one Status and HeapUsed report
	lanes     []*v8sandbox.Resident // each serves one check at a time
	share     *fairshare.Slots      // the lanes, shared between principals
	laneMu    sync.Mutex
	laneBusy  []bool // a check (or a rebuild after one cut short) holds the lane
	codeCache *CodeCacheFile
	ready     atomic.Bool            // the compiler is loaded
	warming   atomic.Bool            // a load was asked for
	warmErr   atomic.Pointer[string] // why the last load failed; nil after one succeeded

	// Background loads (WarmInBackground): one at a time, and after a
	// failed one not before the backoff.
	bgMu      sync.Mutex
	bgLoading bool
	failures  int // background loads failed in a row
	failedAt  time.Time
	retryBase time.Duration // RetryBase (the tests' shorter)
}

// New returns a checker; the compiler is loaded on the first check or on
// [Checker.Warm].
func New(opts Options) *Checker {
	return newChecker(opts, func() string { return opts.CacheDir })
}

// newChecker is New with the code cache's directory read when the
// compiler loads.
func newChecker(opts Options, cacheDir func() string) *Checker {
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultTimeout
	}
	if opts.HeapMB <= 0 {
		opts.HeapMB = DefaultHeapMB
	}
	cache := &CodeCacheFile{dir: cacheDir, logger: slog.Default()}
	var store v8sandbox.ResidentCodeCache = cache
	if opts.CodeCache != nil {
		store = opts.CodeCache
	}
	lanes := make([]*v8sandbox.Resident, Lanes)
	for i := range lanes {
		lanes[i] = v8sandbox.NewResident(v8sandbox.ResidentOptions{
			HeapMB: opts.HeapMB,
			Setup: []v8sandbox.ResidentScript{
				{Origin: "typescript.js", Source: compilerScript, CodeCache: store},
				{Origin: "isogate:typecheck-libs.js", Source: libsScript},
				{Origin: "isogate:checker.js", Source: func() (string, error) { return checkerJS, nil }},
			},
		})
	}
	return &Checker{opts: opts, res: lanes[0], lanes: lanes, share: NewLaneShare(), laneBusy: make([]bool, Lanes),
		codeCache: cache, retryBase: RetryBase}
}

// CodeCacheStats reports what the checker did with its code cache file
// (zero with Options.CodeCache).
func (c *Checker) CodeCacheStats() CodeCacheStats { return c.codeCache.Stats() }

var (
	sharedOnce     sync.Once
	shared         *Checker
	sharedCacheDir atomic.Pointer[string]
)

// SetSharedCacheDir sets the [Shared] checker's Options.CacheDir (the
// gateway's server.cache_dir/typecheck); it applies when the compiler
// loads, so set it before the first check or warm-up.
func SetSharedCacheDir(dir string) { sharedCacheDir.Store(&dir) }

// SharedTimeout bounds a check of the [Shared] checker; callers bound
// theirs (sandbox.typecheck_timeout) with the context they pass.
const SharedTimeout = time.Minute

// Shared is the process's checker, with the default options: the compiler
// is the same for every gateway of a process, so it is loaded (lazily, on
// the first check) once. It is never closed.
func Shared() *Checker {
	sharedOnce.Do(func() {
		shared = newChecker(Options{Timeout: SharedTimeout}, func() string {
			if dir := sharedCacheDir.Load(); dir != nil {
				return *dir
			}
			return ""
		})
	})
	return shared
}

// Warm loads the compiler and parses the libraries now.
func (c *Checker) Warm(ctx context.Context) error {
	c.warming.Store(true)
	err := c.res.Warm(ctx)
	if err == nil {
		c.ready.Store(true)
		c.warmErr.Store(nil)
	} else if ctx.Err() == nil {
		msg := err.Error()
		c.warmErr.Store(&msg)
	}
	return err
}

// After a checker's load (in process isolation, its worker's start)
// failed, the next is tried when a run next asks for the checker once
// RetryBase has passed, doubling with each failure in a row up to
// RetryMax: a load costs seconds of CPU.
const (
	RetryBase = 5 * time.Second
	RetryMax  = 5 * time.Minute
)

// RetryDelay is how long after the last of failures failed loads in a row
// (at least one) the next may begin, from base (RetryBase but in tests).
func RetryDelay(base time.Duration, failures int) time.Duration {
	return min(base<<min(max(failures-1, 0), 16), RetryMax)
}

// WarmInBackground starts loading the compiler without waiting: once, or
// again after a failed load once its backoff has passed.
func (c *Checker) WarmInBackground() {
	c.warming.Store(true)
	if c.ready.Load() {
		return
	}
	c.bgMu.Lock()
	defer c.bgMu.Unlock()
	if c.bgLoading || (c.failures > 0 && time.Since(c.failedAt) < RetryDelay(c.retryBase, c.failures)) {
		return
	}
	c.bgLoading = true
	go func() {
		err := c.Warm(context.Background()) // a failed load shows in Status
		c.bgMu.Lock()
		defer c.bgMu.Unlock()
		c.bgLoading = false
		if err != nil {
			c.failures++
			c.failedAt = time.Now()
		} else {
			c.failures = 0
		}
	}()
}

// Ready reports whether the compiler is loaded: a check then costs only
// the check.
func (c *Checker) Ready() bool { return c.ready.Load() }

// Status reports the checker's state: in this process, its isolate's heap
// and rebuilds, its code cache file.
func (c *Checker) Status() Status {
	st := Status{Where: WhereInProcess, State: StateNotStarted, CodeCache: c.codeCache.Status()}
	for _, lane := range c.lanes {
		rs := lane.Stats()
		st.HeapUsedBytes += rs.HeapUsedBytes
		if rs.Builds > 1 {
			st.Restarts += rs.Builds - 1
		}
	}
	switch msg := c.warmErr.Load(); {
	case c.ready.Load():
		st.State = StateReady
	case msg != nil:
		st.State, st.Error = StateFailed, *msg
	case c.warming.Load():
		st.State = StateStarting
	}
	return st
}

// Close disposes the checker's isolates.
func (c *Checker) Close() {
	for _, lane := range c.lanes {
		lane.Close()
	}
}

// HeapUsed reports the checker isolate's used heap in bytes.
func (c *Checker) HeapUsed(ctx context.Context) (int64, error) { return c.res.HeapUsed(ctx) }

// Declarations are the TypeScript declarations programs are checked
// against. ID names one text (a catalogue version): the checker parses the
// text of an ID once.
type Declarations struct {
	ID   string
	Text string
}

// Diagnostic is one thing the compiler found in a program.
type Diagnostic struct {
	Code    int    `json:"code"`    // the TypeScript error code (TS2339 …)
	Message string `json:"message"` // the compiler's message
	// Line and Column (1-based) are in the program as written; 0 when the
	// diagnostic has no position.
	Line   int `json:"line"`
	Column int `json:"column"`
	// Kind is "unknown_tool", "unknown_backend" (an undefined name used as
	// a backend, spelt like one), "unknown_parameter", "missing_parameter",
	// "missing_arguments", "wrong_type" for a certain mistake in a tool
	// call, "" for anything else.
	Kind string `json:"kind,omitempty"`
	// Certain reports that the tool call it concerns would fail.
	Certain bool `json:"certain"`
	// Tool is the call as written ("counter.bump"); Name the tool or
	// parameter at fault; Suggestion the closest valid name; Expected the
	// parameters the tool takes (unknown_parameter).
	Tool       string   `json:"tool,omitempty"`
	Name       string   `json:"name,omitempty"`
	Suggestion string   `json:"suggestion,omitempty"`
	Expected   []string `json:"expected,omitempty"`
}

// Hint renders the diagnostic for an agent: where, what, and the fix.
func (d Diagnostic) Hint() string {
	var b strings.Builder
	if d.Line > 0 {
		fmt.Fprintf(&b, "line %d, column %d: ", d.Line, d.Column)
	}
	switch d.Kind {
	case "unknown_tool":
		fmt.Fprintf(&b, "`%s` is not a tool of %s", d.Name, strings.TrimSuffix(d.Tool, "."+d.Name))
		if d.Suggestion != "" {
			fmt.Fprintf(&b, "; did you mean `%s`?", d.Suggestion)
		}
	case "unknown_backend":
		fmt.Fprintf(&b, "`%s` is not defined: no backend has that name; did you mean `%s`?", d.Name, d.Suggestion)
	case "unknown_parameter":
		fmt.Fprintf(&b, "`%s` is not a parameter of %s", d.Name, d.Tool)
		switch {
		case d.Suggestion != "":
			fmt.Fprintf(&b, "; did you mean `%s`?", d.Suggestion)
		case len(d.Expected) > 0:
			fmt.Fprintf(&b, "; its parameters are %s", strings.Join(d.Expected, ", "))
		}
	case "missing_parameter":
		fmt.Fprintf(&b, "%s requires the parameter `%s`", d.Tool, d.Name)
	case "missing_arguments":
		fmt.Fprintf(&b, "%s requires arguments: pass an object with its required parameters", d.Tool)
	case "wrong_type":
		if d.Name != "" {
			fmt.Fprintf(&b, "the value of `%s` has the wrong type for %s", d.Name, d.Tool)
		} else {
			fmt.Fprintf(&b, "an argument of %s has the wrong type", d.Tool)
		}
	default:
		return b.String() + fmt.Sprintf("TS%d: %s", d.Code, d.Message)
	}
	fmt.Fprintf(&b, " (TS%d: %s)", d.Code, d.Message)
	return b.String()
}

// Report is the outcome of one check.
type Report struct {
	Diagnostics []Diagnostic `json:"diagnostics"`
	// Plan is what the program may call; nil when it does not parse.
	Plan     *Plan `json:"plan,omitempty"`
	Duration time.Duration
	shared   bool // checked in the shared program of its declarations
}

// Plan is what a program may call, found from its types before it runs:
// each tool reference, and the places where it reaches tools in a way no
// plan can name (then it is partial).
type Plan struct {
	Calls   []PlannedCall `json:"calls"`
	Dynamic []DynamicSite `json:"dynamic,omitempty"`
	// typeQueries is how many expressions' types the checker was asked
	// for while finding the plan (the tests count them).
	typeQueries int
}

// Partial reports whether the program may call tools the plan does not
// name.
func (p *Plan) Partial() bool { return len(p.Dynamic) > 0 }

// The loop verdicts of a [PlannedCall].
const (
	LoopNo      = "no"      // runs at most Times times per run (each call of its function runs it once)
	LoopYes     = "yes"     // inside a loop or an array method's callback
	LoopUnknown = "unknown" // the program's shape does not say (recursion, a callback, a tool passed as a value)
)

// PlannedCall is one reference to a tool: Backend is the interface of its
// backend in the declarations ("IsogateBackend_3"), Tool the member as
// declared (its identifier or its original name). Line and Column (1-based)
// are in the program as written; Loop is LoopNo, LoopYes or LoopUnknown.
type PlannedCall struct {
	Backend string `json:"backend"`
	Tool    string `json:"tool"`
	Line    int    `json:"line"`
	Column  int    `json:"column"`
	Loop    string `json:"loop"`
	// Times bounds how often the call runs in a run when Loop is LoopNo
	// (at least 1); 0 otherwise.
	Times int `json:"times,omitempty"`
	// Unknown marks a member the backend does not declare: a mistake, or
	// a tool the configuration denies (it is not in the catalogue).
	Unknown bool `json:"unknown,omitempty"`
}

// DynamicSite is a place where the program reaches tools by a name the
// checker cannot know: Text is the code there, Why what it does.
type DynamicSite struct {
	Line   int    `json:"line"`
	Column int    `json:"column"`
	Text   string `json:"text"`
	Why    string `json:"why"`
}

// Certain returns the diagnostics that are certain mistakes.
func (r *Report) Certain() []Diagnostic {
	var out []Diagnostic
	for _, d := range r.Diagnostics {
		if d.Certain {
			out = append(out, d)
		}
	}
	return out
}

// ErrUnchecked wraps the error of a check that could not finish (deadline,
// heap cap, a failure of the checker); so does one of ErrTimeout,
// ErrTooComplex and ErrUnavailable, which says why. sandbox.typecheck:
// strict then refuses the program; warn runs it with a notice.
var ErrUnchecked = errors.New("program not type-checked")

// Why a check could not finish (with ErrUnchecked, errors.Is).
var (
	// ErrTimeout: the check ran past its budget and was ended inside the
	// checker (the checker goes on serving).
	ErrTimeout = errors.New("the check exceeded its time budget")
	// ErrTooComplex: checking the program exceeded the checker's memory
	// (its isolate's heap cap, or its stack).
	ErrTooComplex = errors.New("the check exceeded the checker's memory")
	// ErrUnavailable: the checker could not answer (loading, restarting,
	// crashed, its queue for the principal full, closed).
	ErrUnavailable = errors.New("the checker could not answer")
)

// CheckError is the error of a check that could not finish: errors.Is
// matches ErrUnchecked, its Kind and its Err.
type CheckError struct {
	Kind error // ErrTimeout, ErrTooComplex or ErrUnavailable
	Err  error
}

// Error implements error ("program not type-checked: " and why).
func (e *CheckError) Error() string { return ErrUnchecked.Error() + ": " + e.Err.Error() }

// Unwrap returns ErrUnchecked, the kind and the cause.
func (e *CheckError) Unwrap() []error { return []error{ErrUnchecked, e.Kind, e.Err} }

// Unchecked returns the error of a check that could not finish, of kind
// (ErrTimeout, ErrTooComplex or ErrUnavailable).
func Unchecked(kind, err error) error { return &CheckError{Kind: kind, Err: err} }

// KindOf says why a check that failed with err (an error of the checker's
// isolate, a *v8sandbox.Error) could not finish: ErrTimeout past its
// deadline, ErrTooComplex past its heap cap or stack, else
// ErrUnavailable.
func KindOf(err error) error {
	var se *v8sandbox.Error
	if errors.As(err, &se) {
		switch se.Code {
		case v8sandbox.CodeTimeout:
			return ErrTimeout
		case v8sandbox.CodeHeapLimit:
			return ErrTooComplex
		case v8sandbox.CodeEval:
			for _, m := range []string{"Maximum call stack size exceeded", "Invalid string length", "Invalid array length", "out of memory"} {
				if strings.Contains(se.Message, m) {
					return ErrTooComplex
				}
			}
		}
	}
	return ErrUnavailable
}

// Request is one check ([Service.Submit]).
type Request struct {
	Decls   Declarations
	Program string
	// Module is set for a program that exports its entry point.
	Module bool
	// Principal is whose check it is, its fair-share key ("" for none:
	// no share, as for the V8 slots).
	Principal string
	// Budget bounds the check itself, not the waits before it (for the
	// checker to load, for a lane); past it the check is ended inside
	// the checker (ErrTimeout). 0, or more than the checker's timeout:
	// the checker's timeout.
	Budget time.Duration
}

// Submit checks a program for a principal: it waits, while ctx allows,
// for the checker to load and for a lane (its share of them), then checks
// within req.Budget and ctx. The error, when not nil, is a [*CheckError].
func (c *Checker) Submit(ctx context.Context, req Request) (*Report, error) {
	return c.submit(ctx, req, checkMode{})
}

// submit is Submit, done as mode says.
func (c *Checker) submit(ctx context.Context, req Request, mode checkMode) (*Report, error) {
	lane, release, err := c.acquire(ctx, req.Principal)
	if err != nil {
		return nil, err
	}
	res := c.lanes[lane]
	// The lane's isolate is built outside the budget (the first check of
	// a lane, or the one after a check cut short).
	if err := res.Warm(ctx); err != nil {
		release()
		return nil, Unchecked(ErrUnavailable, fmt.Errorf("loading the checker: %w", err))
	}
	if lane == 0 {
		c.ready.Store(true)
	}
	budget := c.opts.Timeout
	if req.Budget > 0 && req.Budget < budget {
		budget = req.Budget
	}
	cctx, cancel := context.WithTimeout(ctx, budget)
	defer cancel()
	rep, err := c.checkOn(cctx, res, req.Decls, req.Program, req.Module, mode)
	if err == nil {
		// The programs checked in a base stay in its checker until it is
		// rebuilt: past half the cap they are dropped, before the lane
		// serves another check.
		if res.Stats().HeapUsedBytes > int64(c.opts.HeapMB)<<20/2 {
			if _, ferr := res.Call(context.Background(), "__isogate_tc_forget", "", forgetTimeout); ferr != nil {
				slog.Warn("type checker: dropping its bases failed", "err", ferr) // a call cut short rebuilt the isolate
			}
		}
		release()
		return rep, nil
	}
	// A check cut short cost its isolate: the lane is rebuilt before it
	// serves again, its principal's share held meanwhile, so that the
	// rebuild is waited for by the principal whose check caused it.
	go func() {
		defer release()
		_ = res.Warm(context.Background()) // a failed build is tried again by the next check
	}()
	return nil, err
}

// acquire takes a lane for principal, waiting while ctx allows.
func (c *Checker) acquire(ctx context.Context, principal string) (lane int, release func(), err error) {
	give, err := c.share.Acquire(ctx, principal)
	if err != nil {
		return 0, nil, Unchecked(ErrUnavailable, fmt.Errorf("waiting for a lane of the checker: %w", err))
	}
	c.laneMu.Lock()
	lane = slices.Index(c.laneBusy, false) // the share holds at most len(lanes): one is free
	c.laneBusy[lane] = true
	c.laneMu.Unlock()
	var once sync.Once
	return lane, func() {
		once.Do(func() {
			c.laneMu.Lock()
			c.laneBusy[lane] = false
			c.laneMu.Unlock()
			give()
		})
	}, nil
}

// Check checks a program (TypeScript or JavaScript, with top-level await
// and return as code mode allows; module is set for a program that exports
// its entry point) against decls, within the checker's timeout and ctx
// (waiting for the checker included; loading the compiler, on the first
// check, excluded), as the principal "" ([Checker.Submit]).
func (c *Checker) Check(ctx context.Context, decls Declarations, program string, module bool) (*Report, error) {
	return c.check(ctx, decls, program, module, false)
}

// check is Check; fresh checks the program in a program of its own
// instead of the shared one of its declarations (the tests compare).
func (c *Checker) check(ctx context.Context, decls Declarations, program string, module, fresh bool) (*Report, error) {
	return c.checkWith(ctx, decls, program, module, checkMode{Fresh: fresh})
}

// checkMode is how the checker goes about a check, for the tests that
// compare its shortcuts with the long way: Fresh checks the program in a
// program of its own instead of the shared one of its declarations;
// ExhaustivePlan asks for the type of every name the plan meets instead
// of only those that may hold a backend.
type checkMode struct {
	Fresh          bool `json:"fresh,omitempty"`
	ExhaustivePlan bool `json:"exhaustivePlan,omitempty"`
}

// checkWith is Check, done as mode says.
func (c *Checker) checkWith(ctx context.Context, decls Declarations, program string, module bool, mode checkMode) (*Report, error) {
	return c.submit(ctx, Request{Decls: decls, Program: program, Module: module}, mode)
}

// checkOn checks a program in the isolate of one lane, within ctx.
func (c *Checker) checkOn(ctx context.Context, res *v8sandbox.Resident, decls Declarations, program string, module bool, mode checkMode) (*Report, error) {
	start := time.Now()
	source, shift := wrap(program, module)
	req, err := json.Marshal(struct {
		Decls  string `json:"decls"`
		Source string `json:"source"`
		checkMode
	}{decls.ID, source, mode})
	if err != nil {
		return nil, Unchecked(ErrUnavailable, err)
	}
	for attempt := 0; ; attempt++ {
		out, err := res.Call(ctx, "__isogate_tc_check", string(req), time.Until(deadline(ctx)))
		if err != nil {
			return nil, Unchecked(KindOf(err), err)
		}
		var rep struct {
			NeedDecls   bool         `json:"needDecls"`
			Diagnostics []Diagnostic `json:"diagnostics"`
			Plan        *Plan        `json:"plan"`
			Shared      bool         `json:"shared"`
			TypeQueries int          `json:"typeQueries"`
		}
		if err := json.Unmarshal([]byte(out), &rep); err != nil {
			return nil, Unchecked(ErrUnavailable, fmt.Errorf("the checker's reply: %w", err))
		}
		if !rep.NeedDecls {
			for i := range rep.Diagnostics {
				d := &rep.Diagnostics[i]
				if d.Line > 0 || d.Column > 0 {
					d.Line += 1 - shift // the checker's lines are 0-based
				}
				if d.Line <= 0 {
					d.Line, d.Column = 0, 0
				}
			}
			if p := rep.Plan; p != nil {
				p.typeQueries = rep.TypeQueries
				for i := range p.Calls {
					p.Calls[i].Line = max(p.Calls[i].Line+1-shift, 1)
				}
				for i := range p.Dynamic {
					p.Dynamic[i].Line = max(p.Dynamic[i].Line+1-shift, 1)
				}
			}
			return &Report{Diagnostics: rep.Diagnostics, Plan: rep.Plan, Duration: time.Since(start), shared: rep.Shared}, nil
		}
		if attempt > 0 {
			return nil, Unchecked(ErrUnavailable, errors.New("the checker lost the declarations"))
		}
		if err := load(ctx, res, decls); err != nil {
			return nil, err
		}
	}
}

// load hands decls to a lane's isolate, which parses them once.
func load(ctx context.Context, res *v8sandbox.Resident, decls Declarations) error {
	arg, err := json.Marshal(struct {
		ID   string `json:"id"`
		Text string `json:"text"`
	}{decls.ID, decls.Text})
	if err != nil {
		return Unchecked(ErrUnavailable, err)
	}
	if _, err := res.Call(ctx, "__isogate_tc_decls", string(arg), time.Until(deadline(ctx))); err != nil {
		return Unchecked(KindOf(err), fmt.Errorf("loading the declarations: %w", err))
	}
	return nil
}

func deadline(ctx context.Context) time.Time {
	d, _ := ctx.Deadline()
	return d
}

// wrap makes a program a TypeScript file: a body with top-level await and
// return becomes an async function's body (one line before it); a module
// is checked as written. shift is the lines added before the program.
func wrap(program string, module bool) (source string, shift int) {
	if module {
		return program, 0
	}
	return "async function __isogate_program() {\n" + program + "\n}\nexport {};\n", 1
}
