package checkworker

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/isogate/isogate/internal/typecheck"
	"github.com/isogate/isogate/v8sandbox/procpool"
)

// The worker side of a checker worker (procpool.Options.Checker,
// checker.go): each run's source is a checkRequest, answered with a
// checkReply by the TypeScript compiler of internal/typecheck, loaded once
// before the worker reports ready, under the worker's confinement. A
// binary that links this package serves as its worker.
func init() {
	procpool.RegisterChecker(func(ctx context.Context, codeCache []byte) (procpool.CheckServer, error) {
		cs, err := newCheckServer(ctx, codeCache)
		if err != nil {
			return nil, err
		}
		return cs, nil
	})
}

// checkRequest is the source of a checker worker's run.
type checkRequest struct {
	// Decls names the declarations (a catalogue version); Text is their
	// text, sent only when the worker may not hold it (WithText: a
	// catalogue with no tool has empty declarations).
	Decls    string `json:"decls"`
	Text     string `json:"text,omitempty"`
	WithText bool   `json:"with_text,omitempty"`
	Program  string `json:"program"`
	Module   bool   `json:"module,omitempty"`
	// Principal is whose check it is (the worker's lanes are shared
	// fairly between principals); Budget bounds the check itself, in
	// nanoseconds (the run's timeout bounds the waits before it too).
	Principal string        `json:"principal,omitempty"`
	Budget    time.Duration `json:"budget,omitempty"`
}

// checkReply is the value of a checker worker's run.
type checkReply struct {
	// NeedDecls asks for the request again with the declarations' text.
	NeedDecls bool              `json:"need_decls,omitempty"`
	Report    *typecheck.Report `json:"report,omitempty"`
	// Error says why the check could not finish; Kind is why in a word
	// (kindTimeout, kindTooComplex, kindUnavailable).
	Error string `json:"error,omitempty"`
	Kind  string `json:"kind,omitempty"`
	// HeapUsed is the compiler isolate's used heap after the check.
	HeapUsed int64 `json:"heap_used,omitempty"`
}

// The kinds of a checkReply's error.
const (
	kindTimeout     = "timeout"
	kindTooComplex  = "too_complex"
	kindUnavailable = "unavailable"
)

// kindName is the word for a typecheck error kind, and kindOf its error.
func kindName(err error) string {
	switch {
	case errors.Is(err, typecheck.ErrTimeout):
		return kindTimeout
	case errors.Is(err, typecheck.ErrTooComplex):
		return kindTooComplex
	}
	return kindUnavailable
}

func kindOf(name string) error {
	switch name {
	case kindTimeout:
		return typecheck.ErrTimeout
	case kindTooComplex:
		return typecheck.ErrTooComplex
	}
	return typecheck.ErrUnavailable
}

// maxHeldDecls bounds the declaration texts a checker worker holds (and
// the parent believes it holds): catalogue versions are few at a time.
const maxHeldDecls = 8

// checkServer is a checker worker's compiler and the declarations it holds.
type checkServer struct {
	checker   *typecheck.Checker
	codeCache *workerCodeCache

	mu    sync.Mutex
	decls map[string]string // ID → text
	order []string          // IDs, oldest first
}

// newCheckServer loads the compiler (with codeCache, its code cache from
// the parent, when not nil) and parses its libraries, so that the worker's
// first check costs only the check.
func newCheckServer(ctx context.Context, codeCache []byte) (*checkServer, error) {
	cache := &workerCodeCache{given: codeCache}
	c := typecheck.New(typecheck.Options{Timeout: typecheck.SharedTimeout, CodeCache: cache})
	if err := c.Warm(ctx); err != nil {
		c.Close()
		return nil, fmt.Errorf("loading the type checker: %w", err)
	}
	cache.given = nil
	return &checkServer{checker: c, codeCache: cache, decls: map[string]string{}}, nil
}

// workerCodeCache is a checker worker's code cache of the compiler: the
// one the parent sent, and the one made when there was none or V8
// rejected it, for the parent to keep (the ready frame).
type workerCodeCache struct {
	mu       sync.Mutex
	given    []byte
	loaded   bool
	made     []byte
	reported bool
}

func (w *workerCodeCache) Load() []byte {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.given
}

func (w *workerCodeCache) Loaded(accepted bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.loaded = accepted
}

func (w *workerCodeCache) Store(data []byte) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.reported { // a rebuilt isolate's cache stays in the worker
		w.made = data
	}
}

// report returns what goes in the ready frame, once.
func (w *workerCodeCache) report() (made []byte, loaded bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	made, loaded = w.made, w.loaded
	w.made, w.reported = nil, true
	return made, loaded
}

// Close implements procpool.CheckServer.
func (cs *checkServer) Close() { cs.checker.Close() }

// CodeCache implements procpool.CheckServer.
func (cs *checkServer) CodeCache() (made []byte, loaded bool) { return cs.codeCache.report() }

// Answer implements procpool.CheckServer: the check of the request in
// source, within ctx.
func (cs *checkServer) Answer(ctx context.Context, source string) (json.RawMessage, error) {
	return json.Marshal(cs.check(ctx, source))
}

// check answers one request within ctx.
func (cs *checkServer) check(ctx context.Context, source string) checkReply {
	var req checkRequest
	if err := json.Unmarshal([]byte(source), &req); err != nil {
		return checkReply{Error: fmt.Sprintf("malformed check request: %v", err)}
	}
	cs.mu.Lock()
	if req.WithText {
		if _, ok := cs.decls[req.Decls]; !ok {
			cs.order = append(cs.order, req.Decls)
			if len(cs.order) > maxHeldDecls {
				delete(cs.decls, cs.order[0])
				cs.order = cs.order[1:]
			}
		}
		cs.decls[req.Decls] = req.Text
	}
	text, ok := cs.decls[req.Decls]
	cs.mu.Unlock()
	if !ok {
		return checkReply{NeedDecls: true}
	}
	rep, err := cs.checker.Submit(ctx, typecheck.Request{Decls: typecheck.Declarations{ID: req.Decls, Text: text},
		Program: req.Program, Module: req.Module, Principal: req.Principal, Budget: req.Budget})
	heap := cs.checker.Status().HeapUsedBytes
	if err != nil {
		return checkReply{Error: strings.TrimPrefix(err.Error(), typecheck.ErrUnchecked.Error()+": "), Kind: kindName(err), HeapUsed: heap}
	}
	return checkReply{Report: rep, HeapUsed: heap}
}
