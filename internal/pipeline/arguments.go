package pipeline

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// ArgumentChecker validates a call's arguments against the input schema of
// backend.tool: nil when they fit (or when the schema cannot be checked),
// else an error whose message says what is wrong and what the tool takes
// (catalog.Catalog.CheckArguments).
type ArgumentChecker func(backend, tool string, args json.RawMessage) error

// ArgumentsStage refuses a call whose arguments the tool's input schema
// refuses, with INVALID_ARGUMENTS, before any person is asked about it and
// before the backend is called. It sits after the policy, so that a tool
// the caller may not use is refused as such, whatever its arguments. A nil
// check admits every call.
//
// With ArgsCensusEnv set, nothing is refused: each distinct call the check
// sees is recorded with the check's finding and the backend's answer (a
// measurement, see [ArgsCensusEnv]).
func ArgumentsStage(check ArgumentChecker) Stage {
	return func(next Caller) Caller {
		if check == nil {
			return next
		}
		return CallerFunc(func(ctx context.Context, c *Call) (*mcp.CallToolResult, error) {
			err := check(c.Backend, c.Tool, c.Args)
			if f := argsCensusFile(); f != nil {
				res, cerr := next.Call(ctx, c)
				argsCensusRecord(f, c, err, res, cerr)
				return res, cerr
			}
			if err != nil {
				return nil, refuse(ctx, c, errorf(CodeInvalidArguments, "%s", err.Error()))
			}
			return next.Call(ctx, c)
		})
	}
}

// ArgsCensusEnv names the environment variable of the argument census: a
// directory. When it is set, ArgumentsStage refuses nothing; it appends
// one JSON line ([ArgsCensusEntry]) per distinct call (tool and arguments)
// to DIR/args-PID.jsonl: what the check found and what the backend
// answered. A call the check refuses that the backend answered without
// error would be a false positive. Never set in production.
const ArgsCensusEnv = "ISOGATE_ARGS_CENSUS"

// ArgsCensusEntry is one call seen by the argument census.
type ArgsCensusEntry struct {
	Tool    string          `json:"tool"` // "backend.tool"
	Args    json.RawMessage `json:"args"`
	Refusal string          `json:"refusal,omitempty"` // what the check said; "" when it admitted the call
	// How the backend answered: Error for a failed call (a refusal of a
	// later stage, a backend error), ToolError for a result with isError.
	Error     string `json:"error,omitempty"`
	ToolError bool   `json:"tool_error,omitempty"`
}

var argsCensus = struct {
	once sync.Once
	mu   sync.Mutex
	file *os.File
	seen map[[32]byte]bool
}{seen: map[[32]byte]bool{}}

// argsCensusFile is this process's argument census file, nil when the
// census is off.
func argsCensusFile() *os.File {
	argsCensus.once.Do(func() {
		dir := os.Getenv(ArgsCensusEnv)
		if dir == "" {
			return
		}
		f, err := os.OpenFile(filepath.Join(dir, fmt.Sprintf("args-%d.jsonl", os.Getpid())), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
		if err == nil {
			argsCensus.file = f
		}
	})
	return argsCensus.file
}

// argsCensusRecord appends a call to the census, once per tool, arguments
// and finding.
func argsCensusRecord(f *os.File, c *Call, refusal error, res *mcp.CallToolResult, err error) {
	e := ArgsCensusEntry{Tool: c.Name(), Args: argsOrEmpty(c.Args)}
	if refusal != nil {
		e.Refusal = refusal.Error()
	}
	if err != nil {
		e.Error = err.Error()
	} else if res != nil {
		e.ToolError = res.IsError
	}
	key := sha256.Sum256(fmt.Appendf(nil, "%s\x00%s\x00%s\x00%v", e.Tool, e.Args, e.Refusal, e.ToolError || e.Error != ""))
	line, merr := json.Marshal(e)
	if merr != nil {
		return
	}
	argsCensus.mu.Lock()
	defer argsCensus.mu.Unlock()
	if argsCensus.seen[key] {
		return
	}
	argsCensus.seen[key] = true
	f.Write(append(line, '\n')) //nolint:errcheck // a measurement: a lost line shows as a missing call
}
