// Package corpus loads the hostile-script corpus (procpool/testdata/hostile)
// and provides the small harness its cases expect, so the same cases can be
// run through any runner: the process pool, the in-process pool, the
// gateway's code mode or `isogate jsrun`.
//
// A case is one .js file. Its leading // comment lines are a header:
//
//	// expect: TIMEOUT              one error code, or several as A|B
//	// expect: OK ["emit","tick"]   success; the JSON value is optional
//	// process-only                 unsafe in-process (aborts or hangs the process)
//	// timeout: 2s                  the run's wall-clock limit (default 1s for
//	                                a case that may end with TIMEOUT, else 5s)
//	// heap-mb: 32                  the run's heap cap (default 64)
//	// anything else                a description
//
// A deadline that is not what a case tests is generous (the heap bombs have
// 60 s): it must not strike first on a loaded machine, and costs nothing
// when the expected limit comes first.
//
// The harness (see [Case.Job] and [Host]) declares two host functions:
//
//   - tick(x) is async and resolves to a counter (1, 2, 3… within one run)
//     after about a millisecond; tick("fail") rejects with Error("tick failed").
//   - emit(s) is sync and appends String(s) to the run's output; beyond
//     [OutputLimitBytes] it ends the run with OUTPUT_LIMIT.
//
// Cases run with AwaitResult, so the completion value (awaited if it is a
// promise) is the value compared for OK cases.
package corpus

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/isogate/isogate/internal/textcut"
	"github.com/isogate/isogate/v8sandbox"
)

// OK is the expectation of a case that must simply be harmless.
const OK v8sandbox.Code = "OK"

// Harness defaults.
const (
	DefaultTimeout = time.Second
	// DefaultTimeoutNoTimeout is the default limit of a case whose correct
	// outcome is not TIMEOUT: its deadline is not what it tests, so it must
	// not strike first on a slow or loaded machine.
	DefaultTimeoutNoTimeout = 5 * time.Second
	DefaultHeapMB           = 64
	DefaultArrayBufferMB    = 64
	DefaultMaxResultBytes   = 1 << 20
	OutputLimitBytes        = 64 << 10
)

// Case is one hostile program.
type Case struct {
	Name   string // file name without .js
	Path   string
	Source string
	// Expect lists the acceptable outcomes: error codes, or OK.
	Expect []v8sandbox.Code
	// Value is the JSON the run must return when Expect is OK (optional).
	Value json.RawMessage
	// ProcessOnly cases abort or wedge a process: never run them in-process.
	ProcessOnly bool
	Timeout     time.Duration
	HeapMB      int
	// Uses lists the harness functions the source refers to.
	Uses        []string
	Description string
}

// Dir returns the corpus directory of this source tree (found from this
// file's location, so it works from any package's tests in the checkout).
func Dir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "testdata", "hostile")
}

var usesRe = regexp.MustCompile(`\b(tick|emit)\b`)

// Load reads every .js case in dir, sorted by name.
func Load(dir string) ([]Case, error) {
	paths, err := filepath.Glob(filepath.Join(dir, "*.js"))
	if err != nil {
		return nil, err
	}
	if len(paths) == 0 {
		return nil, fmt.Errorf("no .js cases in %s", dir)
	}
	sort.Strings(paths)
	cases := make([]Case, 0, len(paths))
	for _, path := range paths {
		src, err := os.ReadFile(path)
		if err != nil {
			return nil, err
		}
		c, err := Parse(strings.TrimSuffix(filepath.Base(path), ".js"), string(src))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		c.Path = path
		cases = append(cases, c)
	}
	return cases, nil
}

// Parse reads a case's header.
func Parse(name, src string) (Case, error) {
	c := Case{Name: name, Source: src, Timeout: DefaultTimeout, HeapMB: DefaultHeapMB}
	timeoutSet := false
	var desc []string
	for _, line := range strings.Split(src, "\n") {
		line = strings.TrimSpace(line)
		if !strings.HasPrefix(line, "//") {
			break
		}
		line = strings.TrimSpace(strings.TrimPrefix(line, "//"))
		key, value, _ := strings.Cut(line, ":")
		value = strings.TrimSpace(value)
		switch strings.TrimSpace(key) {
		case "expect":
			code, rest, _ := strings.Cut(value, " ")
			for _, c1 := range strings.Split(code, "|") {
				c.Expect = append(c.Expect, v8sandbox.Code(c1))
			}
			if rest = strings.TrimSpace(rest); rest != "" {
				if code != string(OK) || !json.Valid([]byte(rest)) {
					return c, fmt.Errorf("bad expect line %q: only OK takes a JSON value", line)
				}
				c.Value = json.RawMessage(rest)
			}
		case "process-only":
			c.ProcessOnly = true
		case "timeout":
			d, err := time.ParseDuration(value)
			if err != nil {
				return c, fmt.Errorf("bad timeout %q", value)
			}
			c.Timeout = d
			timeoutSet = true
		case "heap-mb":
			n, err := strconv.Atoi(value)
			if err != nil {
				return c, fmt.Errorf("bad heap-mb %q", value)
			}
			c.HeapMB = n
		default:
			desc = append(desc, line)
		}
	}
	if len(c.Expect) == 0 {
		return c, errors.New(`missing "// expect:" header`)
	}
	if !timeoutSet && !slices.Contains(c.Expect, v8sandbox.CodeTimeout) {
		c.Timeout = DefaultTimeoutNoTimeout
	}
	c.Description = strings.Join(desc, " ")
	seen := map[string]bool{}
	for _, m := range usesRe.FindAllStringSubmatch(src, -1) {
		for _, g := range m[1:2] {
			if g != "" && !seen[g] {
				seen[g] = true
				c.Uses = append(c.Uses, g)
			}
		}
	}
	sort.Strings(c.Uses)
	return c, nil
}

// Functions are the harness's host functions.
var Functions = NewHost().table.Functions()

// Job returns the case as a job for the harness.
func (c Case) Job() v8sandbox.Job {
	return v8sandbox.Job{
		Source:      c.Source,
		Origin:      c.Name + ".js",
		Functions:   Functions,
		AwaitResult: true,
		Limits: v8sandbox.Limits{
			Timeout:        c.Timeout,
			HeapMB:         c.HeapMB,
			ArrayBufferMB:  DefaultArrayBufferMB,
			MaxResultBytes: DefaultMaxResultBytes,
		},
	}
}

// Check compares a run's outcome with the case's expectation.
func (c Case) Check(res v8sandbox.Result, err error) error {
	got := OK
	if err != nil {
		got = cmp.Or(v8sandbox.CodeOf(err), v8sandbox.CodeInternal) // a code-less error is an engine failure
	}
	for _, want := range c.Expect {
		if got != want {
			continue
		}
		if got == OK && len(c.Value) > 0 && !jsonEqual(c.Value, res.Value) {
			return fmt.Errorf("value %s, want %s", res.Value, c.Value)
		}
		return nil
	}
	if err != nil {
		return fmt.Errorf("got %v, want %s", err, joinCodes(c.Expect))
	}
	return fmt.Errorf("got OK (%s), want %s", textcut.Clip(string(res.Value), 200, "…"), joinCodes(c.Expect))
}

func joinCodes(codes []v8sandbox.Code) string {
	s := make([]string, len(codes))
	for i, c := range codes {
		s[i] = string(c)
	}
	return strings.Join(s, "|")
}

func jsonEqual(a, b json.RawMessage) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	xa, _ := json.Marshal(x)
	ya, _ := json.Marshal(y)
	return string(xa) == string(ya)
}

// Host serves the harness functions for one run. Use a new Host per run.
type Host struct {
	table  *v8sandbox.Table // tick and emit: the declarations and the dispatch
	mu     sync.Mutex
	ticks  int
	output strings.Builder
}

// NewHost returns a fresh harness host.
func NewHost() *Host {
	h := &Host{}
	h.table = new(v8sandbox.Table).Async("tick", h.tick).Sync("emit", h.emit)
	return h
}

// Output returns what the run emitted.
func (h *Host) Output() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.output.String()
}

// Call implements v8sandbox.Host.
func (h *Host) Call(ctx context.Context, c v8sandbox.HostCall) v8sandbox.HostReply {
	return h.table.Call(ctx, c)
}

var _ v8sandbox.Host = (*Host)(nil)

// tick waits a millisecond and returns how many ticks the run made;
// tick("fail") throws.
func (h *Host) tick(ctx context.Context, args json.RawMessage) (json.RawMessage, error) {
	var a []any
	if err := json.Unmarshal(args, &a); err != nil {
		return nil, fmt.Errorf("tick: bad arguments: %v", err)
	}
	if len(a) > 0 && a[0] == "fail" {
		return nil, errors.New("tick failed")
	}
	t := time.NewTimer(time.Millisecond)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	h.mu.Lock()
	h.ticks++
	n := h.ticks
	h.mu.Unlock()
	return json.RawMessage(strconv.Itoa(n)), nil
}

// emit appends its argument (a string, else its JSON) to the output; past
// OutputLimitBytes the run ends with OUTPUT_LIMIT.
func (h *Host) emit(_ context.Context, args json.RawMessage) (json.RawMessage, error) {
	// A JSON string decodes to at least a sixth of its encoded length
	// (\u escapes): an emit whose arguments are that large is over the cap
	// for sure, and is refused before the costly decode (a loaded machine
	// running -race would otherwise hit the deadline first).
	if (len(args)-4)/6 > OutputLimitBytes {
		return nil, v8sandbox.Errorf(v8sandbox.CodeOutputLimit, "output exceeded %d bytes", OutputLimitBytes)
	}
	var a []any
	if err := json.Unmarshal(args, &a); err != nil {
		return nil, fmt.Errorf("emit: bad arguments: %v", err)
	}
	s := ""
	if len(a) > 0 {
		switch v := a[0].(type) {
		case string:
			s = v
		default:
			b, _ := json.Marshal(v)
			s = string(b)
		}
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.output.Len()+len(s) > OutputLimitBytes {
		return nil, v8sandbox.Errorf(v8sandbox.CodeOutputLimit, "output exceeded %d bytes", OutputLimitBytes)
	}
	h.output.WriteString(s)
	return nil, nil
}
