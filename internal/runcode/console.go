package runcode

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/isogate/isogate/internal/textcut"
	"github.com/isogate/isogate/v8sandbox"
)

// session is the host of one run: it collects console lines and serves
// api.* calls.
type session struct {
	order   []*registeredAPI
	hints   map[string]json.RawMessage
	console consoleBuffer
	slots   chan struct{} // bounds api.* calls in flight

	code  string // the user's code, handed to the prelude as data
	state State  // serves state.* (nil: not offered)

	mu       sync.Mutex
	apiCalls int
	result   json.RawMessage // the envelope __isogate_run delivered, if any
}

func newSession(code string, apis []*registeredAPI, hints map[string]json.RawMessage) *session {
	s := &session{
		code:  code,
		order: apis,
		hints: hints,
		slots: make(chan struct{}, MaxConcurrentAPICalls),
	}
	return s
}

// table is the run's function table: the prelude's console, code and
// result functions and one async function per registered API.
func (s *session) table() *v8sandbox.Table {
	t := new(v8sandbox.Table)
	t.Sync(consoleFunction, func(_ context.Context, args json.RawMessage) (json.RawMessage, error) {
		return s.console.write(args)
	})
	t.Sync(codeFunction, func(context.Context, json.RawMessage) (json.RawMessage, error) {
		return json.Marshal(s.code)
	})
	t.Sync(resultFunction, func(_ context.Context, args json.RawMessage) (json.RawMessage, error) {
		return nil, s.deliver(args)
	})
	if s.state != nil {
		t.Sync(stateInvalidFunction, func(_ context.Context, args json.RawMessage) (json.RawMessage, error) {
			return nil, stateInvalid(args)
		})
		for _, f := range stateFunctions {
			t.Async("state."+f.op, func(ctx context.Context, args json.RawMessage) (json.RawMessage, error) {
				return s.stateCall(ctx, f.op, f.fields, args)
			})
		}
	}
	for _, api := range s.order {
		name := "api." + api.Name
		t.Async(name, func(ctx context.Context, args json.RawMessage) (json.RawMessage, error) {
			return s.callAPI(ctx, name, api, args)
		})
	}
	return t
}

// callAPI serves one api.* call, within the run's call budget and
// concurrency bound.
func (s *session) callAPI(ctx context.Context, name string, api *registeredAPI, args json.RawMessage) (json.RawMessage, error) {
	s.mu.Lock()
	s.apiCalls++
	n := s.apiCalls
	s.mu.Unlock()
	if n > MaxAPICalls {
		return nil, fmt.Errorf("%s: too many API calls (the limit is %d per run)", name, MaxAPICalls)
	}
	select {
	case s.slots <- struct{}{}:
		defer func() { <-s.slots }()
	case <-ctx.Done():
		return nil, fmt.Errorf("%s: cancelled: the run ended", name)
	}
	result, err := api.call(ctx, args, s.hints)
	if err != nil {
		msg := err.Error()
		if !strings.HasPrefix(msg, name) {
			msg = name + ": " + msg
		}
		return nil, fmt.Errorf("%s", msg)
	}
	b, err := json.Marshal(result)
	if err != nil {
		return nil, fmt.Errorf("%s: result is not JSON: %v", name, err)
	}
	return b, nil
}

// consoleBuffer holds the console lines of a run, up to MaxConsoleLines.
type consoleBuffer struct {
	mu      sync.Mutex
	stdout  []string
	stderr  []string
	dropped int
}

// write serves the console host function: args is [stream, text]; a call
// without text (made once the buffer is full) only counts a dropped line.
// It returns how many more lines will be kept.
func (c *consoleBuffer) write(args json.RawMessage) (json.RawMessage, error) {
	var a []any
	if err := json.Unmarshal(args, &a); err != nil || len(a) == 0 {
		return nil, fmt.Errorf("console: bad call")
	}
	stream, _ := a[0].(string)
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.stdout)+len(c.stderr) >= MaxConsoleLines || len(a) < 2 {
		c.dropped++
		return json.RawMessage("0"), nil
	}
	text, ok := a[1].(string)
	if !ok {
		b, _ := json.Marshal(a[1])
		text = string(b)
	}
	text = truncateLine(text)
	if stream == "stderr" {
		c.stderr = append(c.stderr, text)
	} else {
		c.stdout = append(c.stdout, text)
	}
	return json.RawMessage(strconv.Itoa(MaxConsoleLines - len(c.stdout) - len(c.stderr))), nil
}

// truncateLine enforces MaxLineChars (the prelude already does; this keeps
// the limit a property of the Go side).
func truncateLine(s string) string {
	n := utf8.RuneCountInString(s)
	if n <= MaxLineChars+64 {
		return s
	}
	return textcut.Runes(s, MaxLineChars) + fmt.Sprintf("... [%d more characters]", n-MaxLineChars)
}

// collect returns the lines and the warnings, adding one about dropped lines.
func (c *consoleBuffer) collect(warnings []string) (stdout, stderr, _ []string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	stdout = append([]string{}, c.stdout...)
	stderr = append([]string{}, c.stderr...)
	if c.dropped > 0 {
		warnings = append(warnings, fmt.Sprintf("console output truncated: %d more lines were dropped after the first %d",
			c.dropped, MaxConsoleLines))
	}
	return stdout, stderr, warnings
}

// deliver keeps the envelope the prelude's runner hands over (args is
// [envelope]); only the first delivery counts. A result over
// MaxResultBytes ends the run with OUTPUT_LIMIT.
func (s *session) deliver(args json.RawMessage) error {
	if len(args) > MaxResultBytes+2 { // the envelope inside "[…]"
		return v8sandbox.Errorf(v8sandbox.CodeOutputLimit, "result of %d bytes exceeds the limit of %d bytes", len(args)-2, MaxResultBytes)
	}
	var env []json.RawMessage
	if err := json.Unmarshal(args, &env); err != nil || len(env) != 1 {
		return fmt.Errorf("malformed result delivery")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.result == nil {
		s.result = env[0]
	}
	return nil
}

// delivered returns the envelope the runner delivered, or nil.
func (s *session) delivered() json.RawMessage {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.result
}
