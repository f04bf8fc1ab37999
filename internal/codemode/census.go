package codemode

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/isogate/isogate/internal/typecheck"
)

// CensusEnv names the environment variable of the type-check census: a
// directory. When it is set, every tier-3 program a process runs with
// sandbox.typecheck off is also checked, as strict mode would check it,
// and one JSON line ([CensusEntry]) per program is appended to
// DIR/census-PID.jsonl: the program, what the checker found and how the
// run ended. A program is checked once per process and catalogue version
// (its first run is recorded; benchmarks repeat theirs). The output of the
// run is unchanged. It is a measurement
// tool (`go run ./cmd/tccensus` runs the test suites
// with it and counts the would-be refusals of valid programs), never set
// in production: each run then waits for a check.
const CensusEnv = "ISOGATE_TYPECHECK_CENSUS"

// censusTimeout bounds a census check: generous, so that a loaded machine
// does not turn a check into "unchecked".
const censusTimeout = time.Minute

// CensusEntry is one program seen by the census.
type CensusEntry struct {
	Code string `json:"code"` // as sent
	// Program is the code as checked (fences removed), Module whether it
	// was checked as a module, Decls the file (DIR/Decls) holding the
	// declarations it was checked against: tccensus -recheck checks it
	// again with the checker of the day.
	Program     string                 `json:"program"`
	Module      bool                   `json:"module,omitempty"`
	Decls       string                 `json:"decls"`
	Diagnostics []typecheck.Diagnostic `json:"diagnostics"`
	Unchecked   string                 `json:"unchecked,omitempty"` // why the check did not finish
	// PlanDenied is the refusal of the program's plan by the policy
	// (PLAN_DENIED: a denied tool), which warn and strict modes give
	// before any call.
	PlanDenied string `json:"plan_denied,omitempty"`
	// The run as it went unchecked: IsError and ErrorCode, and the first
	// bytes of the error's text.
	IsError   bool   `json:"is_error"`
	ErrorCode string `json:"error_code,omitempty"`
	Text      string `json:"text,omitempty"`
}

var census = struct {
	once sync.Once
	mu   sync.Mutex
	file *os.File
	seen map[string]bool // declarations id + program, checked already
	dir  string
}{seen: map[string]bool{}}

// censusFile is the census's file of this process, nil when the census is
// off (or its file cannot be opened, which is logged once).
func (e *Engine) censusFile() *os.File {
	census.once.Do(func() {
		dir := os.Getenv(CensusEnv)
		if dir == "" {
			return
		}
		path := filepath.Join(dir, fmt.Sprintf("census-%d.jsonl", os.Getpid()))
		f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
		if err != nil {
			e.logger.Error("type-check census: opening its file", "path", path, "err", err)
			return
		}
		census.file, census.dir = f, dir
	})
	return census.file
}

// censusCheck returns, for a program the census has not seen, the function
// that checks it once it has run unchecked (so that the check takes nothing
// from the run's own deadline) and records it with the run's response.
func (e *Engine) censusCheck(ctx context.Context, code string, v *view) func(*Response) {
	f := e.censusFile()
	if f == nil {
		return nil
	}
	checker := e.opts.Typecheck
	if checker == nil {
		checker = typecheck.Shared()
	}
	decls := e.checkDeclarations(v)
	census.mu.Lock()
	seen := census.seen[decls.ID+"\x00"+code]
	census.seen[decls.ID+"\x00"+code] = true
	census.mu.Unlock()
	if seen {
		return nil
	}
	return func(resp *Response) {
		program := stripFences(code)
		entry := CensusEntry{Code: code, Program: program, Module: exportsMain(program), Decls: censusDecls(decls.Text)}
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), censusTimeout)
		defer cancel()
		if err := checker.Warm(cctx); err != nil {
			entry.Unchecked = err.Error()
		} else if rep, err := checker.Check(cctx, decls, program, entry.Module); err != nil {
			entry.Unchecked = err.Error()
		} else {
			entry.Diagnostics = rep.Diagnostics
			if plan := planOf(v, rep.Plan, nil); plan != nil && e.opts.AdmitPlan != nil {
				// Without asking anyone (no plan approval): the policy alone.
				if err := e.opts.AdmitPlan(cctx, plan, false); err != nil {
					entry.PlanDenied = err.Error()
				}
			}
		}
		entry.IsError, entry.ErrorCode = resp.IsError, string(resp.Code)
		if resp.IsError {
			entry.Text = resp.Text
		}
		if len(entry.Text) > 400 {
			entry.Text = entry.Text[:400]
		}
		line, err := json.Marshal(entry)
		if err != nil {
			return
		}
		census.mu.Lock()
		defer census.mu.Unlock()
		f.Write(append(line, '\n')) //nolint:errcheck // a measurement: a lost line shows as a missing program
	}
}

// censusDecls keeps the text of a set of declarations in the census's
// directory, once, and returns its file name.
func censusDecls(text string) string {
	sum := sha256.Sum256([]byte(text))
	name := "decls-" + hex.EncodeToString(sum[:8]) + ".d.ts"
	path := filepath.Join(census.dir, name)
	if _, err := os.Stat(path); err != nil {
		tmp := fmt.Sprintf("%s.%d.tmp", path, os.Getpid())
		if os.WriteFile(tmp, []byte(text), 0o644) == nil {
			os.Rename(tmp, path) //nolint:errcheck // a measurement: a lost file shows when rechecking
		}
	}
	return name
}
